import { isActiveSetupSession } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { ManagedInstance, SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import type { Metrics } from '../metrics/metrics.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import type { SetupSessionsService } from '../services/custom-images/setup-sessions.service.ts';
import { withTimeout } from '../with-timeout.ts';

/** How long one provider call of a pass may take before the pass moves on (a wedged engine must not stall it). */
const PROVIDER_CALL_TIMEOUT_MS = 30_000;

export interface Reconciler {
  /** Recovers what a crash left, runs one pass, then repeats every interval. */
  start(): Promise<void>;
  /** One pass: expire setup sessions, then remove provider resources nothing owns. */
  runOnce(): Promise<{ expired: number; removed: number }>;
  stop(): Promise<void>;
}

/**
 * Moves the world toward what the database says: setup sessions past their expiry are timed out
 * and torn down; provider resources labelled as Sandcast's whose sandbox or setup session is gone
 * or finished are removed. Only what a provider lists as its own is ever touched.
 */
export function createReconciler(deps: {
  store: Store;
  providers: ProviderRegistry;
  setupSessions: SetupSessionsService;
  log: FastifyBaseLogger;
  intervalMs: number;
  /** Counts and times every pass. */
  metrics?: Pick<Metrics, 'reconcilerPasses' | 'reconcilerPassDuration'> | undefined;
}): Reconciler {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<{ expired: number; removed: number }> | null = null;

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

  const pass = async () => {
    const expired = await deps.setupSessions.sweepExpired();
    let removed = 0;
    for (const { provider } of deps.providers.list()) {
      removed += await collect(provider).catch((error: unknown) => {
        deps.log.warn({ err: error, provider: provider.id }, 'garbage collection pass failed');
        return 0;
      });
    }
    return { expired, removed };
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

  return {
    runOnce,
    async start() {
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
      await running?.catch(() => undefined);
    },
  };
}
