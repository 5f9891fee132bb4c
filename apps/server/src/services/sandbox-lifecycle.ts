import { InvalidTransition, type Principal, type Sandbox, type SandboxStatus } from '@sandcast/core';
import type { SandboxGuard, SandboxPatch, Store } from '@sandcast/db';
import { isProviderError, ProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../clock.ts';
import type { EgressHooks } from '../egress/egress.service.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { PROVIDER_CALL_TIMEOUT_MS, withTimeout } from '../with-timeout.ts';
import { recordActivity } from './activity.service.ts';
import { requireRegisteredProvider } from './environment-context.ts';

/** Who the reconciler's transitions are recorded as. */
const SYSTEM_ACTOR: Principal = { role: 'admin', keyId: null };

/**
 * A sandbox `starting` for longer than this without a step of ours in flight was left so by a
 * server that died mid-step: the reconciler finishes the start, or fails a creation that never
 * recorded its compute.
 */
const STALE_STARTING_MS = 10 * 60_000;

/** The most steps one converge takes (stopped → starting → running is two; a loop is a bug). */
const MAX_STEPS = 4;

/** What one step toward the desired state did. */
export type StepOutcome =
  /** Nothing to do (converged, waiting on something else, or only looked). */
  | 'idle'
  /** It changed the observed or desired state. */
  | 'stepped'
  /** Another step on this sandbox is in flight in this process; try again later. */
  | 'busy';

export interface StepOptions {
  /** Recorded as the actor of the activity; default the system. */
  actor?: Principal | undefined;
  /** Apply the idle policy of the sandbox's spec (the reconciler does; a request does not). */
  idlePolicy?: boolean | undefined;
  /** Checked right before each provider call: false skips the call (the reconciler lost its lease). */
  mayCallProvider?: (() => boolean) | undefined;
  /** Record activity for the transitions (default true; a probe's throwaway sandbox does not). */
  activity?: boolean | undefined;
}

export type SandboxLifecycle = ReturnType<typeof createSandboxLifecycle>;

/**
 * Moves a sandbox's observed status toward its desired one, one provider step at a time. Every
 * write is compare-and-set on the generation and on the status the step started from (the core
 * machine's sources besides), so when two processes race only one records a transition; steps on
 * one sandbox are single-flight in this process. Every provider call has a timeout. The
 * reconciler calls `step` for each sandbox on each pass; the manual path (`converge`) calls the
 * same step until nothing is left to do.
 */
/** What the lifecycle asks of the host bridge (apps/server/src/bridge). */
export interface BridgeHooks {
  stop(sandboxId: string): Promise<void>;
  resume(sandboxId: string, instanceId: string): Promise<unknown> | null;
}

export function createSandboxLifecycle(deps: {
  store: Store;
  providers: ProviderRegistry;
  log: FastifyBaseLogger;
  clock?: Clock | undefined;
  /** Default PROVIDER_CALL_TIMEOUT_MS. */
  providerCallTimeoutMs?: number | undefined;
  /** Closes the sandbox's ports and cuts their forwarded connections (it is being deleted). */
  closePorts?: ((sandboxId: string) => Promise<void>) | undefined;
  /** Takes the checkpoint an idle `checkpoint_and_stop` stops after (durability `checkpointed`). */
  checkpointBeforeIdleStop?: ((sandbox: Sandbox, actor: Principal) => Promise<unknown>) | undefined;
  /** Puts the egress proxy on a running sandbox's loopback (as its containment says) and takes it away. */
  egress?: EgressHooks | undefined;
  /** The host bridge of a sandbox: it ends with a stop and comes back with a start (src/bridge). */
  bridge?: BridgeHooks | undefined;
}) {
  const { store } = deps;
  const clock = deps.clock ?? systemClock;
  const timeoutMs = deps.providerCallTimeoutMs ?? PROVIDER_CALL_TIMEOUT_MS;
  const inFlight = new Map<string, Promise<unknown>>();
  /** Recoveries in flight here: a second operation on the sandbox joins the first. */
  const recoveries = new Map<string, Promise<unknown>>();

  const providerOf = (sandbox: Sandbox) => requireRegisteredProvider(deps.providers, sandbox.provider).provider;

  const call = <T>(provider: SandboxProvider, operation: Promise<T>, what: string): Promise<T> =>
    withTimeout(
      operation,
      timeoutMs,
      `the ${provider.id} provider's ${what}`,
      (message) => new ProviderError({ provider: provider.id, code: 'timeout', retryable: true, message: `${message}; it is retried` }),
    );

  /**
   * Writes one transition with its activity in one transaction. Null when the guard no longer
   * holds or the machine has no edge from where the sandbox is now: another writer got there first.
   */
  const transition = async (
    sandbox: Sandbox,
    patch: SandboxPatch,
    from: readonly SandboxStatus[],
    activity: { action: string; details?: Record<string, unknown> } | null,
    options: StepOptions,
  ): Promise<Sandbox | null> => {
    const guard: SandboxGuard = { generation: sandbox.generation, statuses: from };
    try {
      return await store.transaction(async (repos) => {
        const updated = await repos.sandboxes.update(sandbox.id, patch, guard);
        if (updated && activity && options.activity !== false) {
          await recordActivity(repos, {
            action: activity.action,
            actor: options.actor ?? SYSTEM_ACTOR,
            subjectType: 'sandbox',
            subjectId: sandbox.id,
            details: { from: sandbox.status, to: updated.status, generation: sandbox.generation, ...activity.details },
          });
        }
        return updated;
      });
    } catch (error) {
      if (error instanceof InvalidTransition) return null;
      throw error;
    }
  };

  const markLost = (sandbox: Sandbox, reason: string, options: StepOptions) =>
    transition(
      sandbox,
      { status: 'lost', failureReason: reason },
      [sandbox.status],
      { action: 'sandbox.lost', details: { reason } },
      options,
    );

  const attachEgress = (sandbox: Sandbox, provider: SandboxProvider) =>
    deps.egress?.attach({ kind: 'sandbox', id: sandbox.id }, provider, sandbox.providerInstanceId!, sandbox.spec.containment);
  const detachEgress = async (sandbox: Sandbox) => {
    if (sandbox.providerInstanceId) await deps.egress?.detach(sandbox.providerInstanceId);
  };

  /**
   * What the provider says about a running sandbox, recorded when it differs. A running one gets
   * its egress proxy (again) here: after a server restart or a recovery, the reconciler's pass
   * re-attaches it to the sandbox's current namespace.
   */
  const observe = async (sandbox: Sandbox, provider: SandboxProvider, options: StepOptions): Promise<StepOutcome> => {
    const info = await call(provider, provider.inspect(sandbox.providerInstanceId!), 'inspect');
    if (info.status === 'running') {
      await attachEgress(sandbox, provider)?.catch((err: unknown) =>
        deps.log.warn({ err, sandboxId: sandbox.id }, 'the egress proxy could not be attached; the sandbox has no route out'),
      );
    } else await detachEgress(sandbox);
    let moved: Sandbox | null = null;
    if (info.status === 'missing') {
      moved = await markLost(sandbox, info.detail ?? 'the provider no longer has this sandbox', options);
    } else if (info.status === 'failed') {
      // The provider stopped it for good (a disk limit passed, its init died): the record says why.
      const reason = info.detail ?? 'the provider reports the sandbox failed';
      moved = await transition(
        sandbox,
        { status: 'failed', failureReason: reason },
        ['running'],
        { action: 'sandbox.failed', details: { reason } },
        options,
      );
    } else if (info.status === 'stopped') {
      // Stopped behind our back; with `ready` desired the next step starts it again.
      const reason = info.detail ?? 'the provider reports the sandbox stopped';
      moved = await transition(
        sandbox,
        { status: 'stopped', failureReason: reason },
        ['running'],
        {
          action: 'sandbox.stopped',
          details: { by: 'provider', reason },
        },
        options,
      );
    }
    return moved ? 'stepped' : 'idle';
  };

  const stop = async (sandbox: Sandbox, provider: SandboxProvider, options: StepOptions, idle: boolean): Promise<StepOutcome> => {
    try {
      await deps.bridge?.stop(sandbox.id);
      await detachEgress(sandbox);
      await call(provider, provider.stop!(sandbox.providerInstanceId!), 'stop');
    } catch (error) {
      if (isProviderError(error) && error.code === 'not_found') {
        await markLost(sandbox, error.message, options);
        return 'stepped';
      }
      throw error;
    }
    const details = idle
      ? {
          idleAfterSeconds: sandbox.spec.lifecycle.idleAfterSeconds,
          idleAction: sandbox.spec.lifecycle.idleAction,
          lastActivityAt: sandbox.lastActivityAt,
        }
      : {};
    const stopped = await transition(
      sandbox,
      { status: 'stopped', failureReason: null },
      ['running'],
      {
        action: idle ? 'sandbox.idle_stopped' : 'sandbox.stopped',
        details,
      },
      options,
    );
    return stopped ? 'stepped' : 'idle';
  };

  /** Claims the start (stopped → starting, or a start a dead server left), calls the provider, records the outcome. */
  const start = async (sandbox: Sandbox, provider: SandboxProvider, options: StepOptions): Promise<StepOutcome> => {
    const claimed =
      sandbox.status === 'starting'
        ? sandbox
        : await transition(sandbox, { status: 'starting', failureReason: null }, ['stopped'], null, options);
    if (!claimed) return 'idle';
    try {
      await call(provider, provider.start!(sandbox.providerInstanceId!), 'start');
      // A start is a new network namespace: the proxy follows it before the sandbox is running.
      await attachEgress(sandbox, provider);
      // The bridge comes back in the background; commands wait for it through their env.
      deps.bridge
        ?.resume(sandbox.id, sandbox.providerInstanceId!)
        ?.catch((err: unknown) => deps.log.warn({ err, sandboxId: sandbox.id }, 'the sandbox bridge could not start again'));
    } catch (error) {
      const lost = isProviderError(error) && error.code === 'not_found';
      const reason = error instanceof Error ? error.message : String(error);
      await (lost
        ? markLost(claimed, reason, options)
        : transition(
            claimed,
            { status: 'failed', failureReason: reason },
            ['starting'],
            { action: 'sandbox.failed', details: { reason } },
            options,
          ));
      throw error;
    }
    const running = await transition(
      claimed,
      { status: 'running', lastActivityAt: clock.now() },
      ['starting'],
      { action: 'sandbox.started' },
      options,
    );
    return running ? 'stepped' : 'idle';
  };

  const destroy = async (sandbox: Sandbox, provider: SandboxProvider | null, options: StepOptions): Promise<StepOutcome> => {
    // Its URLs stop answering now, before the compute is gone.
    if (deps.closePorts) await deps.closePorts(sandbox.id);
    else await store.repos.sandboxPorts.deleteAll(sandbox.id);
    await detachEgress(sandbox);
    if (provider && sandbox.providerInstanceId) await call(provider, provider.destroy(sandbox.providerInstanceId), 'destroy');
    const deleted = await transition(
      sandbox,
      { status: 'deleted' },
      [sandbox.status],
      {
        action: 'sandbox.deleted',
        details: { environmentId: sandbox.environmentId },
      },
      options,
    );
    return deleted ? 'stepped' : 'idle';
  };

  const idleDue = (sandbox: Sandbox): boolean => {
    const { idleAction, idleAfterSeconds } = sandbox.spec.lifecycle;
    if (idleAction === 'keep_running') return false;
    return clock.now().getTime() - new Date(sandbox.lastActivityAt).getTime() >= idleAfterSeconds * 1000;
  };

  const supportsStopStart = (provider: SandboxProvider) => provider.capabilities.stopStart && !!provider.stop && !!provider.start;

  /** The one step this sandbox needs now, as read; provider calls only where the state asks for one. */
  const decideAndRun = async (id: string, options: StepOptions): Promise<StepOutcome> => {
    const sandbox = await store.repos.sandboxes.get(id);
    if (!sandbox || sandbox.status === 'deleted') return 'idle';
    const may = options.mayCallProvider ?? (() => true);
    if (sandbox.desiredStatus === 'deleted') {
      // A sandbox whose compute was never recorded has nothing to remove at the provider.
      const provider = sandbox.providerInstanceId ? providerOf(sandbox) : null;
      if (provider && !may()) return 'idle';
      return destroy(sandbox, provider, options);
    }
    if (sandbox.status === 'starting') {
      // A step of ours in flight elsewhere, or a creation still running: leave it until it is stale.
      if (clock.now().getTime() - new Date(sandbox.updatedAt).getTime() < STALE_STARTING_MS) return 'idle';
      if (!sandbox.providerInstanceId) {
        const reason = 'its creation did not finish (the server stopped while creating it); delete it and create a new one';
        return (await transition(
          sandbox,
          { status: 'failed', failureReason: reason },
          ['starting'],
          { action: 'sandbox.failed', details: { reason } },
          options,
        ))
          ? 'stepped'
          : 'idle';
      }
      const provider = providerOf(sandbox);
      if (!supportsStopStart(provider) || !may()) return 'idle';
      return start(sandbox, provider, options);
    }
    if (!sandbox.providerInstanceId) return 'idle';
    if (sandbox.desiredStatus === 'stopped') {
      if (sandbox.status !== 'running') return 'idle';
      const provider = providerOf(sandbox);
      if (!supportsStopStart(provider) || !may()) return 'idle';
      return stop(sandbox, provider, options, false);
    }
    // Desired ready. A lost sandbox stays lost: replacing its compute is not done yet.
    if (sandbox.status === 'stopped') {
      const provider = providerOf(sandbox);
      if (!supportsStopStart(provider) || !may()) return 'idle';
      return start(sandbox, provider, options);
    }
    if (sandbox.status !== 'running') return 'idle';
    const provider = providerOf(sandbox);
    if (!may()) return 'idle';
    // A warm-pool member waits for a claim, not for activity: the pool's own age limit retires it.
    if (options.idlePolicy && !sandbox.pooled && supportsStopStart(provider) && idleDue(sandbox)) {
      // The policy asks for `stopped`; the stop below is the step toward it.
      const asked = await store.repos.sandboxes.update(
        sandbox.id,
        { desiredStatus: 'stopped' },
        { generation: sandbox.generation, statuses: ['running'] },
      );
      if (!asked) return 'idle';
      if (asked.spec.lifecycle.idleAction === 'checkpoint_and_stop' && asked.spec.durability === 'checkpointed') {
        // The workspace is committed before the compute stops; a failed capture leaves it running.
        try {
          await deps.checkpointBeforeIdleStop?.(asked, options.actor ?? SYSTEM_ACTOR);
        } catch (error) {
          await store.repos.sandboxes.update(asked.id, { desiredStatus: 'ready' }, { generation: asked.generation });
          throw error;
        }
      }
      return stop(asked, provider, options, true);
    }
    return observe(sandbox, provider, options);
  };

  /** Runs `fn` as the one step in flight for `id` in this process. */
  const exclusive = (id: string, fn: () => Promise<StepOutcome>): Promise<StepOutcome> => {
    const running = fn().finally(() => inFlight.delete(id));
    inFlight.set(id, running);
    return running;
  };

  return {
    /** One step toward the desired state; `busy` (and nothing done) while another step on it runs here. */
    step(id: string, options: StepOptions = {}): Promise<StepOutcome> {
      if (inFlight.has(id)) return Promise.resolve('busy');
      return exclusive(id, () => decideAndRun(id, options));
    },

    /**
     * Steps until the sandbox needs nothing more (waiting for a step already in flight here), then
     * reads it back. A provider failure is thrown after the record says what happened.
     */
    async converge(id: string, options: StepOptions = {}): Promise<Sandbox | null> {
      for (let steps = 0; steps < MAX_STEPS; ) {
        const pending = inFlight.get(id);
        if (pending) {
          await pending.catch(() => undefined);
          continue;
        }
        steps++;
        if ((await exclusive(id, () => decideAndRun(id, options))) === 'idle') break;
      }
      return store.repos.sandboxes.get(id);
    },

    /**
     * Looks at a running sandbox's compute and records what changed (lost, failed, stopped): what
     * a read and a refused operation do. Skipped while a step on it is in flight here.
     */
    async refresh(sandbox: Sandbox, options: StepOptions = {}): Promise<Sandbox> {
      if (sandbox.status !== 'running' || !sandbox.providerInstanceId || inFlight.has(sandbox.id)) return sandbox;
      await exclusive(sandbox.id, () => observe(sandbox, providerOf(sandbox), options));
      return (await store.repos.sandboxes.get(sandbox.id)) ?? sandbox;
    },

    /**
     * Runs a recovery of the sandbox as the one task in flight on it here: after the step in
     * flight (if any); a second caller while it runs gets the first one's outcome, and the
     * reconciler skips the sandbox meanwhile.
     */
    recovery<T>(id: string, fn: () => Promise<T>): Promise<T> {
      const joined = recoveries.get(id);
      if (joined) return joined as Promise<T>;
      const run = (async () => {
        for (let pending = inFlight.get(id); pending; pending = inFlight.get(id)) await pending.catch(() => undefined);
        const running = fn();
        inFlight.set(id, running);
        try {
          return await running;
        } finally {
          inFlight.delete(id);
        }
      })().finally(() => recoveries.delete(id));
      recoveries.set(id, run);
      return run;
    },

    /** Records that the compute is gone (an operation was told `not_found`). */
    lost: (sandbox: Sandbox, reason: string, options: StepOptions = {}) => markLost(sandbox, reason, options),

    supportsStopStart,
  };
}
