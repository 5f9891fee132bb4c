import type { ExecBody, ProbeAnswer } from '@sandcast/contracts';
import { canonicalJson, type Principal, type Sandbox, type SandboxDesiredStatus, SandcastError } from '@sandcast/core';
import type { Repositories, Store } from '@sandcast/db';
import { type ExecProcess, type ExecResult, isProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../clock.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { recordActivity } from './activity.service.ts';
import { type EnvironmentContextLoader, requireBootable, requireRegisteredProvider } from './environment-context.ts';
import { requireRoom } from './sandbox-capacity.ts';
import { forkSandbox } from './sandbox-fork.ts';
import type { SandboxLifecycle } from './sandbox-lifecycle.ts';
import { provisionSandbox, type SandboxPlan } from './sessions/primary-sandbox.ts';
import { type BootTarget, createWarmPoolsService } from './warm-pools.service.ts';

export type SandboxesService = ReturnType<typeof createSandboxesService>;

// Each line says what it is: the output is shown to people (CLI and UI), a bare `0` from `id -u` was not.
const PROBE_COMMAND = [
  'sh',
  '-c',
  'echo sandcast-probe-ok; echo "kernel: $(uname -srm)"; echo "user id: $(id -u)"; echo "working directory: $(pwd)"',
];

/**
 * Sandboxes created from environments. A sandbox boots from the environment's active custom
 * image while that image still matches the config, else from the base config; it records which.
 */
export function createSandboxesService(deps: {
  store: Store;
  providers: ProviderRegistry;
  loadEnvironment: EnvironmentContextLoader;
  log: FastifyBaseLogger;
  /** Moves sandboxes toward their desired state (the reconciler's converge, shared). */
  lifecycle: SandboxLifecycle;
  /** Output an exec JSON answer keeps per stream; default the provider SDK's (4 MiB). */
  execOutputMaxBytes?: number | undefined;
  /** The time source of the last activity (the idle policy counts from it). */
  clock?: Clock | undefined;
  /** The instance's cap on sandboxes holding compute, pool members included (SANDCAST_MAX_SANDBOXES); default none. */
  maxSandboxes?: number | null | undefined;
}) {
  const { store, lifecycle } = deps;
  const clock = deps.clock ?? systemClock;
  const maxSandboxes = deps.maxSandboxes ?? null;
  const pools = createWarmPoolsService({ ...deps, maxSandboxes });

  const requireSandbox = async (id: string): Promise<Sandbox> => {
    const sandbox = await store.repos.sandboxes.get(id);
    // A warm-pool member is nobody's sandbox until a claim hands it out.
    if (!sandbox || sandbox.status === 'deleted' || sandbox.pooled) throw new SandcastError('not_found', `no sandbox with id ${id}`);
    return sandbox;
  };

  const providerOf = (sandbox: Sandbox) => requireRegisteredProvider(deps.providers, sandbox.provider).provider;

  /** The compute vanished: say so on the record, and tell the caller in words. */
  const markLost = async (sandbox: Sandbox, reason: string) => {
    await lifecycle.lost(sandbox, reason);
    return new SandcastError('conflict', `sandbox ${sandbox.id} was lost by its provider; delete it and create a new one`, {
      status: 'lost',
    });
  };

  /** Agents act only on sandboxes created with their own key. */
  const requireUser = (sandbox: Sandbox, actor: Principal, what: string) => {
    if (actor.role !== 'admin' && (actor.keyId === null || sandbox.createdByKeyId !== actor.keyId)) {
      // Another key's session sandbox does not exist as far as this key is told.
      if (sandbox.sessionId !== null) throw new SandcastError('not_found', `no sandbox with id ${sandbox.id}`);
      throw new SandcastError('forbidden', `an agent key can ${what} only sandboxes it created`);
    }
  };

  const inRunningSandbox = async <T>(
    id: string,
    actor: Principal,
    run: (provider: SandboxProvider, instanceId: string) => Promise<T>,
  ): Promise<T> => {
    const sandbox = await requireSandbox(id);
    requireUser(sandbox, actor, 'run commands in');
    if (sandbox.status !== 'running' || !sandbox.providerInstanceId) {
      const next = sandbox.status === 'stopped' ? '; start it first' : '';
      throw new SandcastError('conflict', `sandbox ${id} is ${sandbox.status}; commands run only in a running sandbox${next}`, {
        status: sandbox.status,
      });
    }
    // An operation through Sandcast is activity: the idle policy counts from the last one.
    await store.repos.sandboxes.touch(sandbox.id, clock.now());
    try {
      return await run(providerOf(sandbox), sandbox.providerInstanceId);
    } catch (error) {
      if (isProviderError(error) && error.code === 'not_found') throw await markLost(sandbox, error.message);
      // Stopped or broken behind our back: the record learns which before the caller hears of it.
      if (isProviderError(error) && error.code === 'not_running') await lifecycle.refresh(sandbox).catch(() => undefined);
      throw error;
    }
  };

  /**
   * Sets what the sandbox should be (compare-and-set on its generation), then converges right
   * away, one provider step at a time, through the reconciler's own step.
   */
  const setDesired = async (sandbox: Sandbox, desired: SandboxDesiredStatus, actor: Principal): Promise<Sandbox> => {
    if (desired !== 'deleted') {
      if (!lifecycle.supportsStopStart(providerOf(sandbox))) {
        throw new SandcastError(
          'capability_unsupported',
          `the ${sandbox.provider} provider cannot stop and start sandboxes; delete it instead`,
        );
      }
      if (sandbox.status === 'lost' || sandbox.status === 'failed') {
        throw new SandcastError('conflict', `sandbox ${sandbox.id} is ${sandbox.status}; delete it and create a new one`, {
          status: sandbox.status,
        });
      }
    }
    const patch = desired === 'ready' ? { desiredStatus: desired, lastActivityAt: clock.now() } : { desiredStatus: desired };
    const asked = await store.repos.sandboxes.update(sandbox.id, patch, { generation: sandbox.generation });
    if (!asked) throw new SandcastError('conflict', `sandbox ${sandbox.id} changed while this request ran; read it and try again`);
    return (await lifecycle.converge(sandbox.id, { actor }))!;
  };

  const requireSessionSandbox = async (sessionId: string, actor: Principal): Promise<Sandbox> => {
    const session = await store.repos.sessions.get(sessionId);
    // Another key's session does not exist as far as an agent can tell.
    if (!session || (actor.role !== 'admin' && (actor.keyId === null || session.createdByKeyId !== actor.keyId))) {
      throw new SandcastError('not_found', `no session with id ${sessionId}`);
    }
    if (!session.primarySandboxId) throw new SandcastError('conflict', `session ${sessionId} has no sandbox yet; wait for it to start`);
    return requireSandbox(session.primarySandboxId);
  };

  /**
   * A sandbox from a plan: claimed from the environment's warm pool when the plan is exactly what
   * the pool holds (the head revision and its image, the revision's own spec, no overrides — the
   * member already ran that bootstrap), else booted cold once the limit leaves room.
   */
  const supply = async (
    plan: SandboxPlan,
    target: BootTarget | null,
    actor: Principal,
    options: {
      countAsUse: boolean;
      activity: boolean;
      onInserted?: ((repos: Repositories, sandbox: Sandbox) => Promise<void>) | undefined;
    },
  ): Promise<Sandbox> => {
    if (target && poolServes(plan, target)) {
      const claimed = await store.transaction(async (repos) => {
        const taken = await pools.claim(target, { actor, sessionId: plan.sessionId, bindingName: plan.bindingName }, repos);
        if (!taken) return null;
        if (options.activity) {
          await recordActivity(repos, {
            action: 'sandbox.created',
            actor,
            subjectType: 'sandbox',
            subjectId: taken.id,
            details: {
              environmentId: plan.environmentId,
              revision: plan.revision.number,
              imageId: taken.imageId,
              sessionId: plan.sessionId,
              bindingName: plan.bindingName,
              source: 'warm_pool',
            },
          });
        }
        await options.onInserted?.(repos, taken);
        return taken;
      });
      if (claimed) {
        if (claimed.imageId && options.countAsUse) await store.repos.templates.touchLastUsed(claimed.imageId);
        return claimed;
      }
    }
    await requireRoom(store.repos, maxSandboxes, 1);
    return provisionSandbox(deps, plan, actor, options);
  };

  const create = async (environmentId: string, actor: Principal, options: { countAsUse: boolean; activity: boolean; claim: boolean }) => {
    const target = await pools.bootTarget(environmentId);
    const { ctx } = target;
    requireBootable(ctx);
    const plan: SandboxPlan = {
      environmentId,
      revision: ctx.environment.currentRevision,
      registered: ctx.registered,
      config: ctx.environment.config,
      spec: ctx.environment.spec,
      configOverrides: {},
      image: target.image,
      sessionId: null,
      bindingName: null,
    };
    return supply(plan, options.claim ? target : null, actor, options);
  };

  /**
   * A probe's sandbox is archived where the provider says so (capability `archiveInsteadOfDelete`),
   * else deleted through the lifecycle like any other.
   */
  const retireProbe = async (sandbox: Sandbox, actor: Principal) => {
    const provider = providerOf(sandbox);
    await store.repos.sandboxes.update(sandbox.id, { desiredStatus: 'deleted' });
    if (provider.capabilities.archiveInsteadOfDelete && provider.archive && sandbox.providerInstanceId) {
      await provider.archive(sandbox.providerInstanceId);
      await store.repos.sandboxes.update(sandbox.id, { status: 'deleted' });
      return;
    }
    await lifecycle.converge(sandbox.id, { actor, activity: false });
  };

  return {
    /** The environments' warm pools (the reconciler fills them; the environment page shows them). */
    pools,

    create: (input: { environmentId: string }, actor: Principal) =>
      create(input.environmentId, actor, { countAsUse: true, activity: true, claim: true }),

    /**
     * A session's primary sandbox from its pinned plan: claimed from the pool when the pin is
     * exactly the pool's, else booted cold.
     */
    async provision(
      plan: SandboxPlan,
      actor: Principal,
      options: { onInserted?: ((repos: Repositories, sandbox: Sandbox) => Promise<void>) | undefined },
    ): Promise<Sandbox> {
      const target = await pools.bootTarget(plan.environmentId).catch(() => null);
      return supply(plan, target, actor, { countAsUse: true, activity: true, ...options });
    },

    /** Refuses before a session is made when its cold sandbox would not fit (a claim needs no room). */
    requireRoom: (repos: Repositories, adding: number) => requireRoom(repos, maxSandboxes, adding),

    /** Users' sandboxes; warm-pool members are not listed until claimed. */
    list: () => store.repos.sandboxes.list({ pooled: false }),

    /** N new sandboxes with the source's files at this moment (processes are not copied). */
    async fork(id: string, count: number, actor: Principal): Promise<Sandbox[]> {
      const source = await requireSandbox(id);
      requireUser(source, actor, 'fork');
      return forkSandbox({ ...deps, maxSandboxes }, { source, provider: providerOf(source), count, actor });
    },

    /** Reads the sandbox, checking with the provider that its compute still exists. */
    get: async (id: string): Promise<Sandbox> => lifecycle.refresh(await requireSandbox(id)),

    /** Sets desired `deleted` and converges: ports closed, compute removed, record `deleted`. */
    async delete(id: string, actor: Principal): Promise<Sandbox> {
      return setDesired(await requireSandbox(id), 'deleted', actor);
    },

    /** Stops the compute and keeps its disk; `start` brings it back with its files. */
    async stop(id: string, actor: Principal): Promise<Sandbox> {
      const sandbox = await requireSandbox(id);
      requireUser(sandbox, actor, 'stop');
      return setDesired(sandbox, 'stopped', actor);
    },

    async start(id: string, actor: Principal): Promise<Sandbox> {
      const sandbox = await requireSandbox(id);
      requireUser(sandbox, actor, 'start');
      return setDesired(sandbox, 'ready', actor);
    },

    /** The same for a session's primary sandbox; an agent key reaches only sessions it created. */
    stopForSession: async (sessionId: string, actor: Principal): Promise<Sandbox> =>
      setDesired(await requireSessionSandbox(sessionId, actor), 'stopped', actor),

    startForSession: async (sessionId: string, actor: Principal): Promise<Sandbox> =>
      setDesired(await requireSessionSandbox(sessionId, actor), 'ready', actor),

    /** Agents may run commands only in sandboxes created with their own key. */
    exec: (id: string, body: ExecBody, actor: Principal): Promise<ExecResult> =>
      inRunningSandbox(id, actor, (provider, instanceId) =>
        provider.exec(instanceId, { ...body, maxOutputBytes: deps.execOutputMaxBytes }),
      ),

    /** The same command, its output handed over as it is produced (no cap: the reader paces it). */
    execStream: (id: string, body: ExecBody, actor: Principal): Promise<ExecProcess> =>
      inRunningSandbox(id, actor, (provider, instanceId) => provider.execStream(instanceId, body)),

    /** A file's bytes (the caller caps what it answers with). */
    readFile: (id: string, path: string, actor: Principal): Promise<Buffer> =>
      inRunningSandbox(id, actor, async (provider, instanceId) => {
        try {
          return await provider.readFile(instanceId, path);
        } catch (error) {
          // A missing file is not a missing sandbox: only the provider's own word says it lost the compute.
          if (isProviderError(error) && error.code === 'not_found' && (await provider.inspect(instanceId)).status !== 'missing') {
            throw new SandcastError('not_found', `no file at ${path} in the sandbox; write it first or check the path`);
          }
          throw error;
        }
      }),

    writeFile: (id: string, path: string, data: Buffer, mode: number | undefined, actor: Principal): Promise<void> =>
      inRunningSandbox(id, actor, (provider, instanceId) => provider.writeFile(instanceId, path, data, { mode })),

    /** Boots a sandbox the way a run would, runs a short check, and tears it down. */
    async probe(environmentId: string, actor: Principal): Promise<ProbeAnswer> {
      const started = performance.now();
      const ctx = await deps.loadEnvironment(environmentId);
      let sandbox: Sandbox | null = null;
      const base = { provider: ctx.environment.provider, environmentRevisionId: ctx.environment.currentRevision.id };
      try {
        sandbox = await create(environmentId, actor, { countAsUse: false, activity: false, claim: false });
        const result = await providerOf(sandbox).exec(sandbox.providerInstanceId!, { command: PROBE_COMMAND, timeoutMs: 30_000 });
        const ok = result.exitCode === 0 && result.stdout.startsWith('sandcast-probe-ok');
        return {
          ok,
          imageId: sandbox.imageId,
          durationMs: Math.round(performance.now() - started),
          diagnostics: {
            ...base,
            bootedFrom: sandbox.imageId ? 'custom_image' : 'base',
            exitCode: result.exitCode,
            output: `${result.stdout}${result.stderr}`.slice(0, 4000),
          },
        };
      } catch (error) {
        return {
          ok: false,
          imageId: sandbox?.imageId ?? null,
          durationMs: Math.round(performance.now() - started),
          diagnostics: {
            ...base,
            bootedFrom: sandbox?.imageId ? 'custom_image' : 'base',
            exitCode: null,
            output: '',
            error: (error as Error).message,
          },
        };
      } finally {
        if (sandbox)
          await retireProbe(sandbox, actor).catch((err: unknown) =>
            deps.log.warn({ err }, 'probe teardown failed; the reconciler will retry'),
          );
        await recordActivity(store.repos, {
          action: 'environment.probed',
          actor,
          subjectType: 'environment',
          subjectId: environmentId,
          details: {},
        });
      }
    },
  };
}

/** Whether the pool holds what a plan asks for (a plan made from the head revision without overrides). */
function poolServes(plan: SandboxPlan, target: BootTarget): boolean {
  const env = target.ctx.environment;
  return (
    env.spec.warmPool.size > 0 &&
    plan.revision.id === env.currentRevision.id &&
    (plan.image?.id ?? null) === (target.image?.id ?? null) &&
    Object.keys(plan.configOverrides).length === 0 &&
    canonicalJson(plan.spec) === canonicalJson(env.spec)
  );
}
