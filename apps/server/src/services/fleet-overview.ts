import type { FleetOverviewRow } from '@sandcast/contracts';
import { sandboxAttention } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { type Clock, systemClock } from '../clock.ts';

/**
 * The operator's view of every sandbox (the Fleet page): plain, primary and resource sandboxes
 * with their session, environment, pinned revision and image, desired and observed state,
 * generation, last checkpoint and the attention flags computed here, on the server's clock.
 */
export function createFleetOverview(deps: { store: Store; clock?: Clock | undefined }) {
  const clock = deps.clock ?? systemClock;
  return async (options: { includeDeleted?: boolean } = {}): Promise<FleetOverviewRow[]> => {
    const { repos } = deps.store;
    const [sandboxes, sessions, environments] = await Promise.all([
      repos.sandboxes.list({ includeDeleted: options.includeDeleted ?? false }),
      repos.sessions.list(),
      repos.environments.list(),
    ]);
    const sessionById = new Map(sessions.map((s) => [s.id, s]));
    const environmentById = new Map(environments.map((e) => [e.id, e]));
    const revisionNumbers = new Map<string, number | null>();
    for (const id of new Set(sandboxes.map((s) => s.environmentRevisionId))) {
      revisionNumbers.set(id, (await repos.environments.getRevision(id))?.number ?? null);
    }
    const now = clock.now();
    return sandboxes.map((sandbox) => {
      const session = sandbox.sessionId ? (sessionById.get(sandbox.sessionId) ?? null) : null;
      const environment = sandbox.environmentId ? environmentById.get(sandbox.environmentId) : undefined;
      return {
        id: sandbox.id,
        role: sandbox.logicalId ? 'resource' : session?.primarySandboxId === sandbox.id ? 'primary' : 'plain',
        logicalId: sandbox.logicalId,
        session: session ? { id: session.id, status: session.status } : null,
        environment: environment ? { id: environment.id, name: environment.name } : null,
        environmentRevisionNumber: revisionNumbers.get(sandbox.environmentRevisionId) ?? null,
        imageId: sandbox.imageId,
        provider: sandbox.provider,
        desiredState: sandbox.desiredStatus,
        observedState: sandbox.status,
        failureReason: sandbox.failureReason,
        generation: sandbox.generation,
        lastCheckpointId: sandbox.currentCheckpointId,
        lastActivityAt: sandbox.lastActivityAt,
        attention: sandboxAttention(sandbox, now, session?.status === 'ended'),
      };
    });
  };
}
