import { API_PATHS, type HealthResponse } from '@sandcast/contracts';
import type { DeploymentMode } from '@sandcast/core';
import type { FastifyInstance } from 'fastify';

export function registerHealthRoutes(
  app: FastifyInstance,
  deps: { version: string; database: 'pglite' | 'postgres'; mode: DeploymentMode },
): void {
  app.get(
    API_PATHS.health,
    { config: { access: 'public' } },
    async (): Promise<HealthResponse> => ({
      ok: true,
      version: deps.version,
      database: deps.database,
      deploymentMode: deps.mode,
    }),
  );
}
