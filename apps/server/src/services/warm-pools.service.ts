import type { CustomImageTemplate, Principal, Sandbox } from '@sandcast/core';
import type { NewActivity, Store } from '@sandcast/db';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../clock.ts';
import type { BootSourceChanges } from './boot-source-changes.ts';
import { imageMatches } from './custom-images/image-link.ts';
import type { EnvironmentContext, EnvironmentContextLoader } from './environment-context.ts';
import { roomFor } from './sandbox-capacity.ts';
import type { SandboxLifecycle } from './sandbox-lifecycle.ts';
import { provisionSandbox, type SandboxPlan } from './sessions/primary-sandbox.ts';

/**
 * How long a boot target read for a claim is reused for the next claims of that environment. The
 * claim statement re-checks the revision and image itself, so a stale entry can only make a claim
 * take nothing; the caller then reads the target fresh before it boots cold (ADR 0035).
 */
export const CLAIM_TARGET_CACHE_MS = 1000;

/** Pool members are made and removed in the system's name. */
const POOL_ACTOR: Principal = { role: 'admin', keyId: null };

/** What an environment boots from right now: the head revision and its image (null: the base config). */
export interface BootTarget {
  ctx: EnvironmentContext;
  active: CustomImageTemplate | null;
  image: CustomImageTemplate | null;
}

export interface WarmPoolState {
  size: number;
  maxAgeSeconds: number;
  /** Members running, built from the current revision and image: what a claim may take. */
  ready: number;
  /** Members still being created. */
  booting: number;
  lastRefillError: string | null;
  lastRefillAt: string | null;
}

export type WarmPoolsService = ReturnType<typeof createWarmPoolsService>;

/**
 * Warm pools: per environment, `spec.warmPool.size` sandboxes booted ahead of demand from the
 * environment's current boot source, nobody's until claimed. `fill` (the reconciler calls it on
 * each pass and after each claim) drains members that are superseded (another revision or image),
 * past `maxAgeSeconds`, broken, or beyond the size, then boots the missing ones while the
 * instance's sandbox limit leaves room. A claim is the repository's compare-and-set against the
 * boot source read just before it; a claim that finds nothing lets the caller boot cold.
 */
export function createWarmPoolsService(deps: {
  store: Store;
  loadEnvironment: EnvironmentContextLoader;
  lifecycle: SandboxLifecycle;
  log: FastifyBaseLogger;
  clock?: Clock | undefined;
  /** The instance's cap on sandboxes holding compute, pool members included; null for none. */
  maxSandboxes: number | null;
  /** In-process notices of boot-source changes: the claim's cached targets forget them. */
  bootSources?: BootSourceChanges | undefined;
}) {
  const { store } = deps;
  const clock = deps.clock ?? systemClock;
  const filling = new Map<string, Promise<void>>();
  const claimListeners = new Set<(environmentId: string) => void>();

  // The last fresh read of each environment's target, for claims only; real time, not the policy clock.
  const targets = new Map<string, { target: BootTarget; until: number }>();
  // Bumped by every change notice: a read that began before one is not kept.
  let epoch = 0;
  deps.bootSources?.onChanged((environmentId) => {
    epoch++;
    if (environmentId === null) targets.clear();
    else targets.delete(environmentId);
  });

  /** What the environment boots from now: always read fresh (and kept for the claims that follow). */
  const bootTarget = async (environmentId: string): Promise<BootTarget> => {
    const began = epoch;
    // Independent reads, side by side (the active image is looked up by the environment's id alone).
    const [ctx, active] = await Promise.all([deps.loadEnvironment(environmentId), store.repos.templates.active(environmentId)]);
    const target = { ctx, active, image: active && imageMatches(active, ctx) ? active : null };
    const now = performance.now();
    // Expired entries go (a context holds the environment's decrypted config).
    for (const [id, kept] of targets) if (kept.until <= now) targets.delete(id);
    if (epoch === began) targets.set(environmentId, { target, until: now + CLAIM_TARGET_CACHE_MS });
    return target;
  };

  /** Whether a member was built from what the environment boots now and is young enough to hand out. */
  const current = (member: Sandbox, target: BootTarget | null): boolean =>
    target !== null &&
    member.environmentRevisionId === target.ctx.environment.currentRevision.id &&
    member.imageId === (target.image?.id ?? null) &&
    clock.now().getTime() - new Date(member.createdAt).getTime() < target.ctx.environment.spec.warmPool.maxAgeSeconds * 1000;

  /** Asks a member to go, unless a claim took it since it was listed (then it is somebody's sandbox). */
  const drain = async (member: Sandbox) => {
    const asked = await store.repos.sandboxes.update(
      member.id,
      { desiredStatus: 'deleted' },
      { generation: member.generation, pooled: true },
    );
    if (asked) await deps.lifecycle.converge(member.id, { activity: false });
  };

  const planFor = (target: BootTarget): SandboxPlan => ({
    environmentId: target.ctx.environment.id,
    revision: target.ctx.environment.currentRevision,
    registered: target.ctx.registered,
    config: target.ctx.environment.config,
    spec: target.ctx.environment.spec,
    configOverrides: {},
    image: target.image,
    sessionId: null,
    bindingName: null,
  });

  const fillOnce = async (environmentId: string | null, members: Sandbox[], mayCallProvider: () => boolean): Promise<void> => {
    let target: BootTarget | null = null;
    let error: string | null = null;
    if (environmentId !== null) {
      try {
        target = await bootTarget(environmentId);
        if (target.ctx.bootRefusal) error = `sandboxes cannot boot from this revision: ${target.ctx.bootRefusal}`;
      } catch (cause) {
        // The environment is gone or its provider is not registered: its members go.
        error = (cause as Error).message;
      }
    }
    const size = target?.ctx.environment.spec.warmPool.size ?? 0;
    const keep: Sandbox[] = [];
    for (const member of members) {
      const healthy = member.status === 'running' || member.status === 'starting';
      if (healthy && member.desiredStatus === 'ready' && current(member, target) && keep.length < size) keep.push(member);
      else if (member.desiredStatus !== 'deleted' && mayCallProvider()) await drain(member);
      else if (mayCallProvider()) await deps.lifecycle.converge(member.id, { activity: false });
    }
    if (!target || environmentId === null) return;
    let missing = error ? 0 : size - keep.length;
    for (; missing > 0 && mayCallProvider(); missing--) {
      const room = await roomFor(store.repos, deps.maxSandboxes, 1);
      if (room) {
        error = `the pool is ${size - missing} of ${size}: ${room}`;
        break;
      }
      try {
        const made = await provisionSandbox(deps, planFor(target), POOL_ACTOR, { countAsUse: false, activity: false, pooled: true });
        if (made.status === 'failed') {
          error = `a pool member failed to boot: ${made.failureReason}`;
          break;
        }
      } catch (cause) {
        error = `a pool member could not be created: ${(cause as Error).message}`;
        break;
      }
    }
    if (size > 0 || error) await store.repos.warmPools.noteRefill(environmentId, error, clock.now());
    if (error) deps.log.warn({ environmentId, reason: error }, 'warm pool not full');
  };

  /** One fill per environment at a time in this process; a fill asked for while one runs waits for it. */
  const fill = (environmentId: string | null, mayCallProvider: () => boolean = () => true): Promise<void> => {
    const key = environmentId ?? '';
    const previous = filling.get(key) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(async () => {
        const members = await store.repos.sandboxes.list({ pooled: true });
        await fillOnce(
          environmentId,
          members.filter((m) => m.environmentId === environmentId),
          mayCallProvider,
        );
      })
      .finally(() => {
        if (filling.get(key) === next) filling.delete(key);
      });
    filling.set(key, next);
    return next;
  };

  return {
    /** The plan a boot target stands for: the head revision, its own spec and image, no overrides (what a pool member is). */
    planFor,
    bootTarget,

    /**
     * The target read at most CLAIM_TARGET_CACHE_MS ago, or null. For a claim attempt only: never
     * plan a cold boot from it (the claim statement checks it; nothing else does).
     */
    recentTarget(environmentId: string): BootTarget | null {
      const kept = targets.get(environmentId);
      if (!kept) return null;
      if (kept.until > performance.now()) return kept.target;
      targets.delete(environmentId);
      return null;
    },

    /**
     * Takes a ready member for `owner`, or null: one statement that, only when it takes one,
     * writes `options.activity` (subject: the claimed sandbox), touches the image when
     * `options.touchImage` and links `options.primaryOfSession`. Only a member of exactly the
     * target's revision and image, while they are still the environment's.
     */
    async claim(
      target: BootTarget,
      owner: { actor: Principal; sessionId: string | null; bindingName: string | null },
      options: {
        activity?: Omit<NewActivity, 'subjectId'> | undefined;
        touchImage?: boolean | undefined;
        /** A session whose primary sandbox the claimed one becomes, in the same statement. */
        primaryOfSession?: string | undefined;
      } = {},
    ): Promise<Sandbox | null> {
      const claimed = await store.repos.warmPools.claim({
        environmentId: target.ctx.environment.id,
        revisionId: target.ctx.environment.currentRevision.id,
        imageId: target.image?.id ?? null,
        active: target.active ? { id: target.active.id, linkedFingerprint: target.active.linkedFingerprint } : null,
        owner: {
          createdByRole: owner.actor.role,
          createdByKeyId: owner.actor.keyId,
          sessionId: owner.sessionId,
          bindingName: owner.bindingName,
        },
        at: clock.now(),
        activity: options.activity,
        touchImage: options.touchImage,
        primaryOfSession: options.primaryOfSession,
      });
      return claimed;
    },

    /**
     * Tells the listeners a claim from this environment's pool has committed. Called by the
     * claimer after its transaction (a refill started inside it would list the claimed member as
     * still pooled on Postgres, and queue behind the transaction on PGlite).
     */
    claimed(environmentId: string): void {
      for (const listener of claimListeners) listener(environmentId);
    },

    /** Called with the environment after every committed claim (the reconciler refills). */
    onClaim(listener: (environmentId: string) => void): () => void {
      claimListeners.add(listener);
      return () => claimListeners.delete(listener);
    },

    fill,

    /** Fills every environment that wants a pool and drains every member nothing wants any more. */
    async fillAll(mayCallProvider: () => boolean = () => true): Promise<void> {
      const wanted = (await store.repos.environments.list()).filter((e) => e.spec.warmPool.size > 0).map((e) => e.id);
      const withMembers = (await store.repos.sandboxes.list({ pooled: true })).map((m) => m.environmentId);
      for (const environmentId of new Set<string | null>([...wanted, ...withMembers])) {
        if (!mayCallProvider()) return;
        await fill(environmentId, mayCallProvider).catch((error: unknown) =>
          deps.log.warn({ err: error, environmentId }, 'warm pool fill failed; the next pass retries it'),
        );
      }
    },

    async state(environmentId: string): Promise<WarmPoolState> {
      const target = await bootTarget(environmentId);
      const members = await store.repos.warmPools.members(environmentId);
      const record = await store.repos.warmPools.get(environmentId);
      const fresh = members.filter((m) => m.desiredStatus === 'ready' && current(m, target));
      return {
        size: target.ctx.environment.spec.warmPool.size,
        maxAgeSeconds: target.ctx.environment.spec.warmPool.maxAgeSeconds,
        ready: fresh.filter((m) => m.status === 'running').length,
        booting: fresh.filter((m) => m.status === 'starting').length,
        lastRefillError: record?.lastRefillError ?? null,
        lastRefillAt: record?.lastRefillAt ?? null,
      };
    },
  };
}
