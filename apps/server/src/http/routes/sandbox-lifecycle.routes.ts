import { API_PATHS } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { SandboxesService } from '../../services/sandboxes.service.ts';
import { presentSandbox } from '../present.ts';

type IdParams = { id: string };

/**
 * Stopping and starting by hand: the desired state is set and the sandbox converges before the
 * answer. Agents reach them for sandboxes (and sessions) created with their own key; the service
 * checks. The body is ignored (clients send `{}`).
 */
export function registerSandboxLifecycleRoutes(app: FastifyInstance, deps: { sandboxes: SandboxesService }): void {
  const agent = { access: 'agent', feature: 'environments' } as const;
  const { sandboxes } = deps;

  app.post<{ Params: IdParams }>(API_PATHS.sandboxStop, { config: agent }, async (request) =>
    presentSandbox(await sandboxes.stop(request.params.id, request.principal!)),
  );

  app.post<{ Params: IdParams }>(API_PATHS.sandboxStart, { config: agent }, async (request) =>
    presentSandbox(await sandboxes.start(request.params.id, request.principal!)),
  );

  app.post<{ Params: IdParams }>(API_PATHS.sessionSandboxStop, { config: agent }, async (request) =>
    presentSandbox(await sandboxes.stopForSession(request.params.id, request.principal!)),
  );

  app.post<{ Params: IdParams }>(API_PATHS.sessionSandboxStart, { config: agent }, async (request) =>
    presentSandbox(await sandboxes.startForSession(request.params.id, request.principal!)),
  );
}
