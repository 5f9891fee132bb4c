import { randomUUID } from 'node:crypto';
import { isActiveSetupSession } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { ManagedInstance, SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../clock.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import type { SetupSessionsService } from '../services/custom-images/setup-sessions.service.ts';
import type { SandboxLifecycle } from '../services/sandbox-lifecycle.ts';
import type { WarmPoolsService } from '../services/warm-pools.service.ts';
import { PROVIDER_CALL_TIMEOUT_MS, withTimeout } from '../with-timeout.ts';

/** The lease the reconciling server holds; one per database. */
const RECONCILER_LEASE = 'reconciler';

/** Sandboxes stepped at once in a pass (each step makes at most one provider call, with its timeout). */
const SANDBOX_CONCURRENCY = 8;

/**
 * How long after a claim its pool's refill starts: past the claimer's answer and first command
 * (a few milliseconds when nothing competes), short beside a boot. bench/pools measures both.
 */
const REFILL_AFTER_CLAIM_DELAY_MS = 50;

interface PassResult {
  /** Whether this server held the lease and so did the pass (false: another server reconciles). */
  leader: boolean;
  /** Setup sessions timed out. */
  expired: number;
  /** Provider resources removed that nothing owns. */
  removed: number;
  /** Sandboxes a step moved toward their desired state. */
  stepped: number;
}

export interface Reconciler {
  /** Recovers what a crash left, runs one pass, then repeats every interval. */
  start(): Promise<void>;
  /** One pass, if this server holds the lease: expire setup sessions, remove what nothing owns, step every sandbox. */
  runOnce(): Promise<PassResult>;
  /** Resolves once no warm-pool refill after a claim is scheduled or running. */
  settled(): Promise<void>;
  /** Stops the timer, waits for a pass in flight and gives the lease up. */
  stop(): Promise<void>;
}

/**
 * Moves the world toward what the database says: setup sessions past their expiry are timed out
 * and torn down; provider resources labelled as Sandcast's whose sandbox or setup session is gone
 * or finished are removed (only what a provider lists as its own is ever touched); every sandbox
 * not deleted takes one step toward its desired state (the idle policy applied); checkpoints of
 * deleted sandboxes and blobs nobody references are collected. Only the server
 * holding the `reconciler` lease does any of it: the lease is taken or renewed at the start of
 * each pass, and a server whose lease ran out stops calling providers until it holds it again.
 */
export function createReconciler(deps: {
  store: Store;
  providers: ProviderRegistry;
  setupSessions: SetupSessionsService;
  lifecycle: SandboxLifecycle;
  /** Drops the checkpoints of deleted sandboxes and the blobs nobody references. */
  sweepCheckpoints?: (() => Promise<void>) | undefined;
  log: FastifyBaseLogger;
  intervalMs: number;
  /** How long a taken lease lasts unless renewed; default three intervals, at least 30 s. */
  leaseTtlMs?: number | undefined;
  /** Default the system clock; lease expiry and the idle policy read it. */
  clock?: Clock | undefined;
  /** False only in tests that show what the lease prevents: every pass reconciles. */
  leaderLease?: boolean | undefined;
  /** Counts and times every pass. */
  metrics?: Pick<Metrics, 'reconcilerPasses' | 'reconcilerPassDuration'> | undefined;
  /** Warm pools, filled and drained after the sandboxes are stepped, and refilled after each claim. */
  warmPools?: WarmPoolsService | undefined;
  /** Delay of the refill after a claim (REFILL_AFTER_CLAIM_DELAY_MS). */
  refillDelayMs?: number | undefined;
}): Reconciler {
  const clock = deps.clock ?? systemClock;
  const holder = randomUUID();
  const leaseTtlMs = deps.leaseTtlMs ?? Math.max(3 * deps.intervalMs, 30_000);
  /** Until when (this server's clock) the lease is ours; a renewal moves it. */
  let heldUntil = 0;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<PassResult> | null = null;

  /** Takes or renews the lease. The deadline counts from before the statement, so it never overstates. */
  const holdLease = async (): Promise<boolean> => {
    if (deps.leaderLease === false) return true;
    const now = clock.now();
    const held = await deps.store.repos.leaderLeases.acquire(RECONCILER_LEASE, holder, leaseTtlMs, now);
    heldUntil = held ? now.getTime() + leaseTtlMs : 0;
    return held;
  };
  // A margin for the provider call that starts right before the lease runs out.
  const stillLeader = () => deps.leaderLease === false || clock.now().getTime() < heldUntil - Math.min(5_000, leaseTtlMs / 4);

  /** Whether the database still wants this provider resource. */
  const owned = async (instance: ManagedInstance): Promise<boolean> => {
    if (instance.ownerKind === 'sandbox') {
      const sandbox = await deps.store.repos.sandboxes.get(instance.ownerId);
      if (!sandbox || sandbox.desiredStatus === 'deleted' || sandbox.status === 'deleted' || sandbox.status === 'failed') return false;
      // Still being created: the instance id is not recorded yet.
      return sandbox.status === 'starting' || sandbox.providerInstanceId === instance.instanceId;
    }
    const session = await deps.store.repos.setupSessions.get(instance.ownerId);
    if (!session || !isActiveSetupSession(session.status)) return false;
    return session.status === 'starting' || session.providerLeaseId === instance.instanceId;
  };

  const collect = async (provider: SandboxProvider): Promise<number> => {
    const availability = await withTimeout(provider.availability(), PROVIDER_CALL_TIMEOUT_MS, `${provider.id} availability`).catch(() => ({
      available: false,
    }));
    if (!availability.available) return 0;
    let removed = 0;
    for (const instance of await withTimeout(provider.listInstances(), PROVIDER_CALL_TIMEOUT_MS, `${provider.id} listInstances`)) {
      if (await owned(instance)) continue;
      try {
        const removal =
          instance.ownerKind === 'setup' ? provider.cancelInteractiveSetup(instance.instanceId) : provider.destroy(instance.instanceId);
        await withTimeout(removal, PROVIDER_CALL_TIMEOUT_MS, `removing ${instance.instanceId}`);
        removed++;
        deps.log.info({ provider: provider.id, ...instance }, 'removed a provider resource nothing owns');
      } catch (error) {
        deps.log.warn({ err: error, provider: provider.id, ...instance }, 'could not remove an orphaned provider resource; will retry');
      }
    }
    return removed + (await collectCaptures(provider));
  };

  /**
   * Removes what a capture left that the database never recorded — a server that died between the
   * provider's commit and the promotion — once its setup session is over. The session is read
   * before the images: a promotion records both in one transaction, so a finished capture is
   * never seen as neither running nor recorded. An image any custom image names is never removed.
   */
  const collectCaptures = async (provider: SandboxProvider): Promise<number> => {
    if (!provider.listCapturedTemplates) return 0;
    let removed = 0;
    const captured = await withTimeout(provider.listCapturedTemplates(), PROVIDER_CALL_TIMEOUT_MS, `${provider.id} listCapturedTemplates`);
    for (const capture of captured) {
      const session = await deps.store.repos.setupSessions.get(capture.setupSessionId);
      if (session && isActiveSetupSession(session.status)) continue;
      if (await deps.store.repos.templates.isReferenced(provider.id, capture.refs)) continue;
      try {
        await withTimeout(provider.deleteTemplate(capture.template), PROVIDER_CALL_TIMEOUT_MS, `removing ${capture.template.ref}`);
        removed++;
        deps.log.info(
          { provider: provider.id, ref: capture.template.ref, setupSessionId: capture.setupSessionId },
          'removed a captured image no custom image records',
        );
      } catch (error) {
        deps.log.warn(
          { err: error, provider: provider.id, ref: capture.template.ref },
          'could not remove an unrecorded captured image; will retry',
        );
      }
    }
    return removed;
  };

  /** One step for every sandbox not deleted, a few at a time; a failing sandbox never stops the others. */
  const stepSandboxes = async (): Promise<number> => {
    const queue = (await deps.store.repos.sandboxes.list()).map((s) => s.id);
    let stepped = 0;
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined && stillLeader(); id = queue.shift()) {
        try {
          const outcome = await deps.lifecycle.step(id, { idlePolicy: true, mayCallProvider: stillLeader });
          if (outcome === 'stepped') stepped++;
        } catch (error) {
          deps.log.warn({ err: error, sandboxId: id }, 'a sandbox step failed; the next pass retries it');
        }
      }
    };
    await Promise.all(Array.from({ length: SANDBOX_CONCURRENCY }, worker));
    return stepped;
  };

  const pass = async (): Promise<PassResult> => {
    if (!(await holdLease())) return { leader: false, expired: 0, removed: 0, stepped: 0 };
    const expired = await deps.setupSessions.sweepExpired();
    let removed = 0;
    for (const { provider } of deps.providers.list()) {
      if (!stillLeader()) break;
      removed += await collect(provider).catch((error: unknown) => {
        deps.log.warn({ err: error, provider: provider.id }, 'garbage collection pass failed');
        return 0;
      });
    }
    // An ended session's sandboxes are to go, whatever stopped their teardown; the steps below remove them.
    const orphaned = await deps.store.repos.sandboxes.desireDeletedOfEndedSessions();
    if (orphaned.length > 0) deps.log.info({ sandboxIds: orphaned }, 'sandboxes of ended sessions set to be deleted');
    const stepped = await stepSandboxes();
    if (stillLeader() && deps.sweepCheckpoints) {
      await deps.sweepCheckpoints().catch((error: unknown) => deps.log.warn({ err: error }, 'checkpoint collection failed; will retry'));
    }
    if (stillLeader()) await deps.warmPools?.fillAll(stillLeader);
    return { leader: true, expired, removed, stepped };
  };

  const measuredPass = async () => {
    const stop = deps.metrics?.reconcilerPassDuration.startTimer();
    try {
      const result = await pass();
      deps.metrics?.reconcilerPasses.inc({ outcome: 'ok' });
      return result;
    } catch (error) {
      deps.metrics?.reconcilerPasses.inc({ outcome: 'failed' });
      throw error;
    } finally {
      stop?.();
    }
  };

  const runOnce = () => {
    running ??= measuredPass().finally(() => {
      running = null;
    });
    return running;
  };

  /**
   * A claim took a member: the leader refills that pool soon rather than at the next pass. Not at
   * once: the claimer's first command arrives right after its answer, and a refill's reads and
   * provider create would share the event loop (and the database) with it (ADR 0032).
   */
  const refillAfterClaim = (environmentId: string) => {
    if (!timer || heldUntil === 0 || !stillLeader() || !deps.warmPools) return;
    const pools = deps.warmPools;
    const later = setTimeout(() => {
      waiting.delete(later);
      if (!timer || !stillLeader()) return;
      const refill = pools
        .fill(environmentId, stillLeader)
        .catch((error: unknown) => deps.log.warn({ err: error, environmentId }, 'warm pool refill failed; the next pass retries it'))
        .finally(() => refills.delete(refill));
      refills.add(refill);
    }, refillDelayMs);
    waiting.add(later);
  };
  const refillDelayMs = deps.refillDelayMs ?? REFILL_AFTER_CLAIM_DELAY_MS;
  const waiting = new Set<NodeJS.Timeout>();
  const refills = new Set<Promise<void>>();
  let unsubscribe: (() => void) | null = null;

  return {
    runOnce,
    /** Resolves once no refill after a claim is scheduled or running (tests and benchmarks wait on it). */
    async settled(): Promise<void> {
      while (waiting.size > 0 || refills.size > 0) {
        await Promise.all([...refills]);
        if (waiting.size > 0) await new Promise((resolve) => setTimeout(resolve, refillDelayMs));
      }
    },
    async start() {
      unsubscribe = deps.warmPools?.onClaim(refillAfterClaim) ?? null;
      await deps.setupSessions.recoverAfterRestart();
      // The first pass runs in the background: a slow or wedged provider must not hold up start.
      runOnce().catch((error: unknown) => deps.log.error({ err: error }, 'reconciler pass failed'));
      timer = setInterval(() => {
        runOnce().catch((error: unknown) => deps.log.error({ err: error }, 'reconciler pass failed'));
      }, deps.intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      unsubscribe?.();
      for (const later of waiting) clearTimeout(later);
      waiting.clear();
      await Promise.all(refills);
      await running?.catch(() => undefined);
      // Another server takes over at its next pass instead of waiting for the lease to expire.
      if (heldUntil > 0) await deps.store.repos.leaderLeases.release(RECONCILER_LEASE, holder).catch(() => undefined);
      heldUntil = 0;
    },
  };
}
