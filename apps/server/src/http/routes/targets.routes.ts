import { API_PATHS, type SandboxTarget } from '@sandcast/contracts';
import type { Availability } from '@sandcast/provider-sdk';
import type { FastifyInstance } from 'fastify';
import type { ProviderRegistry } from '../../providers/provider-registry.ts';
import { withTimeout } from '../../with-timeout.ts';

const AVAILABILITY_TIMEOUT_MS = 3_000;

/** A provider that hangs or throws must not break the listing: it reads as unavailable instead. */
function availabilityOf(check: () => Promise<Availability>): Promise<Availability> {
  return withTimeout(check(), AVAILABILITY_TIMEOUT_MS, 'the availability check').catch((e: Error) => ({
    available: false as const,
    reason: e.message,
  }));
}

export function registerTargetRoutes(app: FastifyInstance, deps: { providers: ProviderRegistry }): void {
  app.get(API_PATHS.sandboxTargets, { config: { access: 'admin' } }, async () => {
    const targets = await Promise.all(
      deps.providers.list().map(async ({ provider, jsonSchema }): Promise<SandboxTarget> => {
        const availability = await availabilityOf(() => provider.availability());
        return {
          provider: provider.id,
          displayName: provider.displayName,
          available: availability.available,
          ...(availability.available ? {} : { unavailableReason: availability.reason }),
          capabilities: { ...provider.capabilities },
          configSchema: jsonSchema,
        };
      }),
    );
    return { targets };
  });
}
