import { type Checkpoint, type CheckpointTrigger, type Principal, type Sandbox, SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../clock.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { recordActivity } from '../services/activity.service.ts';
import { requireRegisteredProvider } from '../services/environment-context.ts';
import type { SettingsService } from '../services/settings.service.ts';
import type { BlobStore, CheckpointEngine, CheckpointManifest, WorkspaceSource, WorkspaceTarget } from './types.ts';
import { clearWorkspace } from './workspace-dir.ts';

/** An unattached checkpoint older than this was left by a server that died before attaching it. */
const STALE_UNATTACHED_MS = 10 * 60_000;
/** How often, and how long, recording waits for a collector that claimed a blob it needs. */
const CLAIM_WAIT_MS = 50;
const CLAIM_WAIT_ROUNDS = 100;
/** Captures of one checkpoint before giving up on blobs that keep vanishing under it. */
const CAPTURE_ATTEMPTS = 3;
/** Manifests kept in memory (the previous one of each busy sandbox, mostly). */
const MANIFEST_CACHE = 64;

/** Where a long restore is; the route streams these as progress lines. */
export type RestoreProgress = (progress: { phase: string; fraction?: number | undefined }) => void;

export type CheckpointsService = ReturnType<typeof createCheckpointsService>;

/**
 * Checkpoints of checkpointed sandboxes: capture the workspace through the engine, record the
 * checkpoint unattached with its blob references, attach it in one compare-and-set fenced on the
 * sandbox's generation, keep the newest N attached and delete blobs nobody references. Captures
 * and restores of one sandbox run one at a time in this process, so each capture compares against
 * the one before it.
 */
export function createCheckpointsService(deps: {
  store: Store;
  providers: ProviderRegistry;
  engine: CheckpointEngine;
  blobs: BlobStore;
  settings: SettingsService;
  log: FastifyBaseLogger;
  clock?: Clock | undefined;
}) {
  const { store, engine, blobs } = deps;
  const clock = deps.clock ?? systemClock;
  const queues = new Map<string, Promise<unknown>>();
  const manifests = new Map<string, CheckpointManifest>();
  /**
   * What a host-dir restore wrote, per sandbox: the next capture compares against it (the inodes
   * and times the files have on this compute), so it reads only what changed since the restore.
   */
  const restoredAs = new Map<string, { generation: number; checkpointId: string; manifest: CheckpointManifest }>();

  /** Runs `fn` after every capture or restore of the sandbox queued before it (in this process). */
  const serially = <T>(sandboxId: string, fn: () => Promise<T>): Promise<T> => {
    const before = queues.get(sandboxId) ?? Promise.resolve();
    const run = before.catch(() => undefined).then(fn);
    const tail = run.catch(() => undefined);
    queues.set(sandboxId, tail);
    void tail.then(() => {
      if (queues.get(sandboxId) === tail) queues.delete(sandboxId);
    });
    return run;
  };

  const manifestOf = async (digest: string): Promise<CheckpointManifest> => {
    const cached = manifests.get(digest);
    if (cached) return cached;
    const manifest = await engine.loadManifest(digest);
    if (manifests.size >= MANIFEST_CACHE) manifests.delete(manifests.keys().next().value!);
    manifests.set(digest, manifest);
    return manifest;
  };

  const hostDirOf = async (provider: SandboxProvider, instanceId: string, path: string): Promise<string | null> =>
    provider.workspaceHostPath ? provider.workspaceHostPath(instanceId, path) : null;

  const sourceOf = async (provider: SandboxProvider, instanceId: string, path: string): Promise<WorkspaceSource> => {
    const dir = await hostDirOf(provider, instanceId, path);
    return dir ? { kind: 'host-dir', dir } : { kind: 'tar', open: () => provider.exportWorkspace(instanceId, path) };
  };

  const targetOf = async (provider: SandboxProvider, instanceId: string, path: string): Promise<WorkspaceTarget> => {
    const dir = await hostDirOf(provider, instanceId, path);
    if (dir) return { kind: 'host-dir', dir };
    return {
      kind: 'tar',
      write: async (tar) => {
        await clearWorkspace(provider, instanceId, path);
        await provider.importWorkspace(instanceId, tar, path);
      },
    };
  };

  /** Deletes blobs nobody references: claim (refs 0 → -1), delete the bytes, drop the rows. */
  const collect = async (): Promise<number> => {
    let deleted = 0;
    for (;;) {
      const claimed = await store.repos.checkpoints.claimUnreferenced();
      if (claimed.length === 0) return deleted;
      await blobs.delete(claimed);
      await store.repos.checkpoints.forget(claimed);
      for (const digest of claimed) manifests.delete(digest);
      deleted += claimed.length;
    }
  };

  /** Retention: the newest N attached stay (and the current one); the rest go with their unshared blobs. */
  const prune = async (sandboxId: string): Promise<void> => {
    const keep = (await deps.settings.get()).sessions.checkpointRetention;
    const staleBefore = new Date(clock.now().getTime() - STALE_UNATTACHED_MS);
    const ids = await store.repos.checkpoints.prunable(sandboxId, keep, staleBefore);
    await store.repos.checkpoints.release(ids);
    await collect();
  };

  /** Records the checkpoint, waiting out collectors that are deleting blobs it needs. */
  const record = async (input: Parameters<Store['repos']['checkpoints']['record']>[0]) => {
    for (let round = 0; ; round++) {
      const outcome = await store.repos.checkpoints.record(input);
      if (outcome.kind === 'recorded') return outcome;
      if (round >= CLAIM_WAIT_ROUNDS) {
        // The collector that claimed them died before it finished: finish its deletion.
        await blobs.delete(outcome.digests);
        await store.repos.checkpoints.forget(outcome.digests);
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, CLAIM_WAIT_MS));
    }
  };

  /**
   * Captures the sandbox's workspace and attaches the checkpoint. Null when the sandbox's
   * generation moved on meanwhile (its compute was replaced): that checkpoint is dropped.
   */
  const take = async (sandbox: Sandbox, trigger: CheckpointTrigger, actor: Principal | null): Promise<Checkpoint | null> => {
    const instanceId = sandbox.providerInstanceId;
    if (!instanceId) throw new SandcastError('conflict', `sandbox ${sandbox.id} has no compute to checkpoint; start it first`);
    const provider = requireRegisteredProvider(deps.providers, sandbox.provider).provider;
    const current = sandbox.currentCheckpointId ? await store.repos.checkpoints.get(sandbox.currentCheckpointId) : null;
    const restored = restoredAs.get(sandbox.id);
    let previous =
      restored && current && restored.checkpointId === current.id && restored.generation === sandbox.generation
        ? restored.manifest
        : current
          ? await manifestOf(current.manifestDigest).catch(() => null)
          : null;
    restoredAs.delete(sandbox.id);
    // Checkpoints whose blobs a collector took between capture and record: held (so the blobs
    // stored again are referenced) until one capture is whole, then released.
    const held: string[] = [];
    try {
      for (let attempt = 1; ; attempt++) {
        const result = await engine.capture(await sourceOf(provider, instanceId, sandbox.spec.workspacePath), previous);
        const outcome = await record({
          sandboxId: sandbox.id,
          generation: sandbox.generation,
          manifestDigest: result.manifestDigest,
          storedBytes: result.storedBytes,
          totalBytes: result.totalBytes,
          fileCount: result.fileCount,
          changedPaths: result.changedPaths,
          trigger,
          digests: [...engine.chunksOf(result.manifest), result.manifestDigest],
        });
        // A blob this checkpoint is the only reference of may have been deleted just before it
        // was counted; now that it is counted, nobody deletes it, so one look settles it.
        const present = await Promise.all(outcome.unverified.map((digest) => blobs.has(digest)));
        if (present.every(Boolean)) {
          manifests.set(result.manifestDigest, result.manifest);
          const attached = await store.repos.checkpoints.attach(outcome.checkpoint.id);
          if (!attached) {
            deps.log.info({ sandboxId: sandbox.id, generation: sandbox.generation }, 'checkpoint of fenced-out compute dropped');
            held.push(outcome.checkpoint.id);
            return null;
          }
          if (actor && trigger !== 'auto') {
            await recordActivity(store.repos, {
              action: 'sandbox.checkpointed',
              actor,
              subjectType: 'sandbox',
              subjectId: sandbox.id,
              details: { checkpointId: attached.id, trigger, storedBytes: attached.storedBytes, changedPaths: attached.changedPaths },
            });
          }
          return attached;
        }
        held.push(outcome.checkpoint.id);
        if (attempt >= CAPTURE_ATTEMPTS) {
          throw new SandcastError(
            'provider_error',
            `the checkpoint of sandbox ${sandbox.id} lost blobs to a concurrent collection; try again`,
          );
        }
        // Store every chunk again: the comparison with the previous manifest would skip them.
        previous = null;
      }
    } finally {
      await store.repos.checkpoints.release(held).catch((err: unknown) => deps.log.warn({ err }, 'releasing a checkpoint failed'));
      await prune(sandbox.id).catch((err: unknown) => deps.log.warn({ err, sandboxId: sandbox.id }, 'checkpoint retention failed'));
    }
  };

  const requireCheckpoint = async (sandbox: Sandbox, checkpointId: string): Promise<Checkpoint> => {
    const checkpoint = await store.repos.checkpoints.get(checkpointId);
    // Another sandbox's checkpoint, or one never attached, does not exist as far as this one is told.
    if (!checkpoint || checkpoint.sandboxId !== sandbox.id || checkpoint.attachedAt === null) {
      throw new SandcastError('not_found', `no checkpoint ${checkpointId} of this sandbox; list them with GET …/sandbox/checkpoints`);
    }
    return checkpoint;
  };

  /** Writes a checkpoint's workspace onto compute (the digest of the manifest and of every chunk verified). */
  const restoreOnto = async (
    sandbox: Pick<Sandbox, 'id' | 'generation'>,
    provider: SandboxProvider,
    instanceId: string,
    workspacePath: string,
    checkpoint: Checkpoint,
    progress: RestoreProgress = () => undefined,
  ): Promise<void> => {
    progress({ phase: 'reading the manifest' });
    const manifest = await manifestOf(checkpoint.manifestDigest);
    progress({ phase: `restoring ${checkpoint.fileCount} files (${checkpoint.totalBytes} bytes)` });
    const { asWritten } = await engine.restore(manifest, checkpoint.manifestDigest, await targetOf(provider, instanceId, workspacePath));
    if (asWritten) restoredAs.set(sandbox.id, { generation: sandbox.generation, checkpointId: checkpoint.id, manifest: asWritten });
  };

  return {
    /**
     * The hook every mutating operation through Sandcast calls before it answers (session exec
     * and file writes; fleet exec and writes too): for a `checkpointed` sandbox that is running,
     * a checkpoint of its workspace, attached; otherwise nothing. A capture that fails is thrown
     * as `provider_error` saying the operation itself did run.
     */
    async afterMutation(sandboxId: string, known?: Pick<Sandbox, 'spec'>): Promise<Checkpoint | null> {
      // A sandbox's spec never changes: one read before the operation says whether it is checkpointed.
      if (known && known.spec.durability !== 'checkpointed') return null;
      return serially(sandboxId, async () => {
        const sandbox = await store.repos.sandboxes.get(sandboxId);
        if (sandbox?.spec.durability !== 'checkpointed' || sandbox.status !== 'running') return null;
        try {
          return await take(sandbox, 'auto', null);
        } catch (error) {
          if (error instanceof SandcastError) throw error;
          deps.log.error({ err: error, sandboxId }, 'checkpoint after an operation failed');
          throw new SandcastError(
            'provider_error',
            `the operation ran, but the workspace of sandbox ${sandboxId} could not be checkpointed (${(error as Error).message}); the next checkpoint includes its changes`,
          );
        }
      });
    },

    /** A checkpoint on request (`manual`) or before an idle stop (`idle`). */
    take: (sandbox: Sandbox, trigger: CheckpointTrigger, actor: Principal) =>
      serially(sandbox.id, async () => {
        const fresh = (await store.repos.sandboxes.get(sandbox.id)) ?? sandbox;
        return take(fresh, trigger, actor);
      }),

    /** The attached checkpoints, newest first. */
    list: (sandboxId: string) => store.repos.checkpoints.listAttached(sandboxId),

    /**
     * Rolls the running sandbox's workspace back to one of its checkpoints, which becomes the
     * current one (what a recovery would restore). Fenced on the generation it ran at.
     */
    restore: (sandbox: Sandbox, checkpointId: string, actor: Principal, progress?: RestoreProgress): Promise<Checkpoint> =>
      serially(sandbox.id, async () => {
        const checkpoint = await requireCheckpoint(sandbox, checkpointId);
        const instanceId = sandbox.providerInstanceId;
        if (!instanceId) throw new SandcastError('conflict', `sandbox ${sandbox.id} has no compute to restore onto; start it first`);
        const provider = requireRegisteredProvider(deps.providers, sandbox.provider).provider;
        await restoreOnto(sandbox, provider, instanceId, sandbox.spec.workspacePath, checkpoint, progress);
        progress?.({ phase: 'recording' });
        const moved = await store.transaction(async (repos) => {
          if (!(await repos.checkpoints.makeCurrent(checkpoint.id, sandbox.id, sandbox.generation))) return false;
          await recordActivity(repos, {
            action: 'sandbox.checkpoint_restored',
            actor,
            subjectType: 'sandbox',
            subjectId: sandbox.id,
            details: { checkpointId: checkpoint.id, generation: sandbox.generation },
          });
          return true;
        });
        if (!moved) {
          throw new SandcastError('conflict', `sandbox ${sandbox.id} got new compute while the restore ran; restore again`);
        }
        return checkpoint;
      }),

    /** A recovery's restore: the sandbox's current checkpoint onto its replacement compute. */
    restoreOnto,

    requireCheckpoint,

    /** Retention and collection for a sandbox (all of its checkpoints once it is deleted). */
    async forgetSandbox(sandboxId: string): Promise<void> {
      await store.repos.checkpoints.release(await store.repos.checkpoints.idsOf(sandboxId));
      await collect();
    },

    /** The reconciler's sweep: checkpoints of deleted sandboxes, then unreferenced blobs. */
    async sweep(): Promise<void> {
      for (const id of await store.repos.checkpoints.deletedWithCheckpoints()) {
        await store.repos.checkpoints.release(await store.repos.checkpoints.idsOf(id));
      }
      await collect();
    },
  };
}
