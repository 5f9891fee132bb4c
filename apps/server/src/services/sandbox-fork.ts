import { type Principal, type Sandbox, SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import { recordActivity } from './activity.service.ts';
import { requireRoom } from './sandbox-capacity.ts';

/** What a fork answer says beside the sandboxes: a fork copies files, not processes. */
export const FORK_NOTE =
  'each fork has the files the source had at the moment of the fork; processes are not copied (a fork starts with none running)';

/**
 * Forks a running sandbox into `count` new ones with its filesystem at this moment. They pin the
 * source's environment revision, image, spec and config overrides, and belong to the caller.
 * The limit is checked before anything is made; the records are inserted `starting`, the provider
 * makes all the compute or none (it removes what it made when one fails), and on failure every
 * record is marked deleted so nothing half-made is left: the error says so.
 */
export async function forkSandbox(
  deps: { store: Store; log: FastifyBaseLogger; maxSandboxes: number | null },
  input: { source: Sandbox; provider: SandboxProvider; count: number; actor: Principal },
): Promise<Sandbox[]> {
  const { store } = deps;
  const { source, provider, count, actor } = input;
  if (!provider.capabilities.fork || !provider.fork) {
    throw new SandcastError('capability_unsupported', `the ${provider.id} provider cannot fork sandboxes; create new ones instead`);
  }
  if (source.status !== 'running' || !source.providerInstanceId) {
    throw new SandcastError(
      'conflict',
      `sandbox ${source.id} is ${source.status}; only a running sandbox can be forked${source.status === 'stopped' ? '; start it first' : ''}`,
      {
        status: source.status,
      },
    );
  }
  await requireRoom(store.repos, deps.maxSandboxes, count);
  const records = await store.transaction(async (repos) => {
    const made: Sandbox[] = [];
    for (let i = 0; i < count; i++) {
      made.push(
        await repos.sandboxes.insert({
          environmentId: source.environmentId,
          environmentRevisionId: source.environmentRevisionId,
          imageId: source.imageId,
          provider: source.provider,
          spec: source.spec,
          bindingName: source.bindingName,
          configOverrides: source.configOverrides,
          createdByRole: actor.role,
          createdByKeyId: actor.keyId,
          source: 'fork',
          forkedFromId: source.id,
        }),
      );
    }
    await recordActivity(repos, {
      action: 'sandbox.forked',
      actor,
      subjectType: 'sandbox',
      subjectId: source.id,
      details: { count, forks: made.map((s) => s.id) },
    });
    return made;
  });
  let created: Array<{ instanceId: string }>;
  try {
    created = await provider.fork(
      source.providerInstanceId,
      records.map((r) => ({ sandboxId: r.id })),
    );
    if (created.length !== count) throw new Error(`the provider made ${created.length} forks instead of ${count}`);
  } catch (error) {
    for (const record of records) {
      await store.repos.sandboxes
        .update(record.id, { desiredStatus: 'deleted', status: 'deleted', failureReason: `the fork failed: ${(error as Error).message}` })
        .catch(() => undefined);
    }
    deps.log.warn({ err: error, sandboxId: source.id, count }, 'fork failed; its records are deleted');
    throw new SandcastError(
      'provider_error',
      `forking sandbox ${source.id} into ${count} failed, and none of the ${count} was kept (the provider removed what it had made): ${(error as Error).message}`,
    );
  }
  const forks: Sandbox[] = [];
  for (const [index, record] of records.entries()) {
    const running = await store.repos.sandboxes.update(record.id, { providerInstanceId: created[index]!.instanceId, status: 'running' });
    forks.push(running ?? record);
  }
  return forks;
}
