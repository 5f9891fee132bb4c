import { API_PATHS, type SandboxTarget } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import { availabilityOf } from '../../providers/availability.ts';
import type { ProviderRegistry } from '../../providers/provider-registry.ts';

export function registerTargetRoutes(app: FastifyInstance, deps: { providers: ProviderRegistry }): void {
  app.get(API_PATHS.sandboxTargets, { config: { access: 'admin' } }, async () => {
    const targets = await Promise.all(
      deps.providers.list().map(async ({ provider, jsonSchema, connection }): Promise<SandboxTarget> => {
        const availability = await availabilityOf(() => provider.availability());
        return {
          provider: provider.id,
          displayName: provider.displayName,
          available: availability.available,
          ...(availability.available ? {} : { unavailableReason: availability.reason }),
          capabilities: { ...provider.capabilities },
          configSchema: jsonSchema,
          ...(connection ? { connection: { configSchema: connection.configJsonSchema, secretsSchema: connection.secretsJsonSchema } } : {}),
        };
      }),
    );
    return { targets };
  });
}
