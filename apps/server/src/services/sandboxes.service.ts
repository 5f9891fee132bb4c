import type { ExecBody, ProbeAnswer, SandboxRecovered } from '@sandcast/contracts';
import { canonicalJson, type Principal, type Sandbox, type SandboxDesiredStatus, SandcastError } from '@sandcast/core';
import type { Repositories, Store } from '@sandcast/db';
import { type ExecProcess, type ExecResult, isProviderError } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../clock.ts';
import type { EgressHooks } from '../egress/egress.service.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { activityEntry, recordActivity } from './activity.service.ts';
import type { BootSourceChanges } from './boot-source-changes.ts';
import { type EnvironmentContextLoader, requireBootable } from './environment-context.ts';
import { requireRoom } from './sandbox-capacity.ts';
import { createComputeAccess } from './sandbox-compute-access.ts';
import { forkSandbox } from './sandbox-fork.ts';
import type { SandboxLifecycle } from './sandbox-lifecycle.ts';
import type { SandboxRecovery } from './sandbox-recovery.ts';
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
  /** Replaces lost compute of checkpointed sandboxes; without it, lost compute is refused with `compute_lost`. */
  recovery?: SandboxRecovery | undefined;
  /** The host bridge's variables for a sandbox's commands (none when it has no bridge). */
  bridgeEnv?: ((sandboxId: string) => Promise<Record<string, string>>) | undefined;
  /** Gives a new sandbox the egress proxy its containment calls for, before bootstrap runs. */
  egress?: EgressHooks | undefined;
  /** The instance's cap on sandboxes holding compute, pool members included (SANDCAST_MAX_SANDBOXES); default none. */
  maxSandboxes?: number | null | undefined;
  /** In-process notices of boot-source changes (the claim's cached boot targets forget them). */
  bootSources?: BootSourceChanges | undefined;
}) {
  const { store, lifecycle } = deps;
  /** A bridged sandbox's commands learn SANDCAST_BRIDGE_URL and SANDCAST_BRIDGE_TOKEN (their own env wins). */
  const withBridgeEnv = async (id: string, body: ExecBody): Promise<ExecBody> => {
    const bridge = (await deps.bridgeEnv?.(id)) ?? {};
    return Object.keys(bridge).length === 0 ? body : { ...body, env: { ...bridge, ...body.env } };
  };
  const clock = deps.clock ?? systemClock;
  const maxSandboxes = deps.maxSandboxes ?? null;
  const pools = createWarmPoolsService({ ...deps, maxSandboxes });

  const { requireSandbox, requireUser, providerOf, inRunningSandbox } = createComputeAccess({ ...deps, clock });

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

  type SupplyOptions = {
    countAsUse: boolean;
    activity: boolean;
    /** The session whose primary sandbox this one becomes (with the claim, or with the insert). */
    primaryOfSession?: string | undefined;
  };

  /**
   * A member of the pool for the plan, or null: one statement (ADR 0035) — the claim, its
   * `sandbox.created` row, the image's touch and a session's primary link. The statement itself
   * checks that the target is still current.
   */
  const claimFor = async (plan: SandboxPlan, target: BootTarget, actor: Principal, options: SupplyOptions) => {
    const owner = { actor, sessionId: plan.sessionId, bindingName: plan.bindingName };
    const activity = options.activity
      ? activityEntry({
          action: 'sandbox.created',
          actor,
          subjectType: 'sandbox',
          subjectId: null,
          details: {
            environmentId: plan.environmentId,
            revision: plan.revision.number,
            // The member's own: the claim takes only one of the target's image.
            imageId: target.image?.id ?? null,
            sessionId: plan.sessionId,
            bindingName: plan.bindingName,
            source: 'warm_pool',
          },
        })
      : undefined;
    const claimed = await pools.claim(target, owner, {
      activity,
      touchImage: options.countAsUse,
      primaryOfSession: options.primaryOfSession,
    });
    if (claimed) pools.claimed(plan.environmentId);
    return claimed;
  };

  /** What a claim against the target compares: equal keys, the same statement. */
  const claimKey = (t: BootTarget) =>
    `${t.ctx.environment.currentRevision.id} ${t.image?.id ?? ''} ${t.active ? `${t.active.id} ${t.active.linkedFingerprint}` : ''}`;

  /**
   * A sandbox from a plan: claimed from the environment's warm pool when the plan is exactly what
   * the pool holds (the head revision and its image, the revision's own spec, no overrides — the
   * member already ran that bootstrap), else booted cold once the limit leaves room. `tried`: a
   * target a claim was just refused against (the same claim is not sent again).
   */
  const supply = async (
    plan: SandboxPlan,
    target: BootTarget | null,
    actor: Principal,
    options: SupplyOptions,
    tried: BootTarget | null = null,
  ): Promise<Sandbox> => {
    if (target && poolServes(plan, target) && (!tried || claimKey(tried) !== claimKey(target))) {
      const claimed = await claimFor(plan, target, actor, options);
      if (claimed) return claimed;
    }
    await requireRoom(store.repos, maxSandboxes, 1);
    const session = options.primaryOfSession;
    // A cold boot links the session in the insert's transaction.
    const onInserted = session
      ? async (repos: Repositories, made: Sandbox) => void (await repos.sessions.setPrimarySandbox(session, made.id))
      : undefined;
    return provisionSandbox(deps, plan, actor, { ...options, onInserted });
  };

  const planOf = pools.planFor;

  /**
   * A claim against the environment's target as kept from a fresh read under a second ago (by a
   * create, a fill, the pool page): no read before the claim statement, which checks the target
   * itself. A refusal (nothing
   * ready, or the target no longer current) returns null and the caller reads the target afresh:
   * a cold boot is never planned from the kept one.
   */
  const claimRecent = async (plan: SandboxPlan | null, environmentId: string, actor: Principal, options: SupplyOptions) => {
    const recent = pools.recentTarget(environmentId);
    if (!recent || recent.ctx.bootRefusal !== null) return { recent: null, claimed: null };
    const wanted = plan ?? planOf(recent);
    if (!poolServes(wanted, recent)) return { recent: null, claimed: null };
    return { recent, claimed: await claimFor(wanted, recent, actor, options) };
  };

  const create = async (environmentId: string, actor: Principal, options: { countAsUse: boolean; activity: boolean; claim: boolean }) => {
    const first = options.claim ? await claimRecent(null, environmentId, actor, options) : { recent: null, claimed: null };
    if (first.claimed) return first.claimed;
    const target = await pools.bootTarget(environmentId);
    requireBootable(target.ctx);
    return supply(planOf(target), options.claim ? target : null, actor, options, first.recent);
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
     * exactly the pool's, else booted cold; `primaryOfSession` is linked to it in the claim's
     * statement or the insert's transaction.
     */
    async provision(plan: SandboxPlan, actor: Principal, options: { primaryOfSession?: string | undefined }): Promise<Sandbox> {
      const supplyOptions = { countAsUse: true, activity: true, ...options };
      const first = await claimRecent(plan, plan.environmentId, actor, supplyOptions);
      if (first.claimed) return first.claimed;
      const target = await pools.bootTarget(plan.environmentId).catch(() => null);
      return supply(plan, target, actor, supplyOptions, first.recent);
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
    exec: async (id: string, body: ExecBody, actor: Principal): Promise<ExecResult & { recovered?: SandboxRecovered }> => {
      const { value, recovered } = await inRunningSandbox(id, actor, async (provider, instanceId) =>
        provider.exec(instanceId, { ...(await withBridgeEnv(id, body)), maxOutputBytes: deps.execOutputMaxBytes }),
      );
      return recovered ? { ...value, recovered } : value;
    },

    /** The same command, its output handed over as it is produced (no cap: the reader paces it). */
    execStream: async (id: string, body: ExecBody, actor: Principal): Promise<ExecProcess & { recovered?: SandboxRecovered }> => {
      const { value, recovered } = await inRunningSandbox(id, actor, async (provider, instanceId) =>
        provider.execStream(instanceId, await withBridgeEnv(id, body)),
      );
      return recovered ? Object.assign(value, { recovered }) : value;
    },

    /** A file's bytes (the caller caps what it answers with). */
    readFile: (id: string, path: string, actor: Principal): Promise<{ value: Buffer; recovered?: SandboxRecovered }> =>
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

    writeFile: (
      id: string,
      path: string,
      data: Buffer,
      mode: number | undefined,
      actor: Principal,
    ): Promise<{ recovered?: SandboxRecovered }> =>
      inRunningSandbox(id, actor, (provider, instanceId) => provider.writeFile(instanceId, path, data, { mode })),

    /** Any other operation on the compute (a checkpoint, a restore), with the same recovery. */
    withCompute: <T>(id: string, actor: Principal, run: (sandbox: Sandbox) => Promise<T>) =>
      inRunningSandbox(id, actor, async () => run(await requireSandbox(id))),

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
