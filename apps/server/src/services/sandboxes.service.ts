import type { ExecBody, ProbeAnswer } from '@sandcast/contracts';
import { InvalidTransition, type Principal, type Sandbox, SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { type ExecProcess, type ExecResult, isProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import type { PortConnections } from '../ports/port-connections.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { recordActivity } from './activity.service.ts';
import { imageMatches } from './custom-images/image-link.ts';
import { type EnvironmentContextLoader, requireBootable, requireRegisteredProvider } from './environment-context.ts';
import { provisionSandbox, type SandboxPlan } from './sessions/primary-sandbox.ts';

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
  /** Output an exec JSON answer keeps per stream; default the provider SDK's (4 MiB). */
  execOutputMaxBytes?: number | undefined;
  /** Forwarded connections to the sandbox's ports, ended when it is deleted. */
  portConnections?: PortConnections | undefined;
}) {
  const { store } = deps;

  const requireSandbox = async (id: string): Promise<Sandbox> => {
    const sandbox = await store.repos.sandboxes.get(id);
    if (!sandbox || sandbox.status === 'deleted') throw new SandcastError('not_found', `no sandbox with id ${id}`);
    return sandbox;
  };

  const providerOf = (sandbox: Sandbox) => requireRegisteredProvider(deps.providers, sandbox.provider).provider;

  /** The compute vanished: say so on the record, and tell the caller in words. */
  const markLost = async (sandbox: Sandbox) => {
    await store.repos.sandboxes
      .update(sandbox.id, { status: 'lost', failureReason: 'the provider no longer has this sandbox' })
      .catch((error: unknown) => {
        // Another request found it gone first (or deleted it): the record already says so.
        if (!(error instanceof InvalidTransition)) throw error;
      });
    return new SandcastError('conflict', `sandbox ${sandbox.id} was lost by its provider; delete it and create a new one`, {
      status: 'lost',
    });
  };

  const inRunningSandbox = async <T>(
    id: string,
    actor: Principal,
    run: (provider: SandboxProvider, instanceId: string) => Promise<T>,
  ): Promise<T> => {
    const sandbox = await requireSandbox(id);
    if (actor.role !== 'admin' && (actor.keyId === null || sandbox.createdByKeyId !== actor.keyId)) {
      // Another key's session sandbox does not exist as far as this key is told.
      if (sandbox.sessionId !== null) throw new SandcastError('not_found', `no sandbox with id ${id}`);
      throw new SandcastError('forbidden', 'an agent key can run commands only in sandboxes it created');
    }
    if (sandbox.status !== 'running' || !sandbox.providerInstanceId) {
      throw new SandcastError('conflict', `sandbox ${id} is ${sandbox.status}; commands run only in a running sandbox`, {
        status: sandbox.status,
      });
    }
    try {
      return await run(providerOf(sandbox), sandbox.providerInstanceId);
    } catch (error) {
      if (isProviderError(error) && error.code === 'not_found') throw await markLost(sandbox);
      throw error;
    }
  };

  const create = async (environmentId: string, actor: Principal, options: { countAsUse: boolean; activity: boolean }) => {
    const ctx = await deps.loadEnvironment(environmentId);
    requireBootable(ctx);
    const active = await store.repos.templates.active(environmentId);
    const plan: SandboxPlan = {
      environmentId,
      revision: ctx.environment.currentRevision,
      registered: ctx.registered,
      config: ctx.environment.config,
      spec: ctx.environment.spec,
      configOverrides: {},
      image: active && imageMatches(active, ctx) ? active : null,
      sessionId: null,
      bindingName: null,
    };
    return provisionSandbox(deps, plan, actor, options);
  };

  const destroy = async (sandbox: Sandbox) => {
    await store.repos.sandboxes.update(sandbox.id, { desiredStatus: 'deleted' });
    // Its URLs stop answering now, before the compute is gone.
    await store.repos.sandboxPorts.deleteAll(sandbox.id);
    deps.portConnections?.closeAll(sandbox.id);
    if (sandbox.providerInstanceId) await providerOf(sandbox).destroy(sandbox.providerInstanceId);
    return (await store.repos.sandboxes.update(sandbox.id, { status: 'deleted' }))!;
  };

  return {
    create: (input: { environmentId: string }, actor: Principal) =>
      create(input.environmentId, actor, { countAsUse: true, activity: true }),

    list: () => store.repos.sandboxes.list(),

    /** Reads the sandbox, checking with the provider that its compute still exists. */
    async get(id: string): Promise<Sandbox> {
      const sandbox = await requireSandbox(id);
      if (sandbox.status !== 'running' || !sandbox.providerInstanceId) return sandbox;
      const info = await providerOf(sandbox).inspect(sandbox.providerInstanceId);
      if (info.status === 'missing') {
        await markLost(sandbox);
        return requireSandbox(id);
      }
      if (info.status === 'failed' || info.status === 'stopped') {
        // The provider stopped it (a disk limit passed, its init died): the record says so and why.
        const reason = info.detail ?? `the provider reports the sandbox ${info.status}`;
        await store.repos.sandboxes.update(sandbox.id, { status: 'failed', failureReason: reason }).catch((error: unknown) => {
          if (!(error instanceof InvalidTransition)) throw error;
        });
        return requireSandbox(id);
      }
      return sandbox;
    },

    async delete(id: string, actor: Principal): Promise<Sandbox> {
      const sandbox = await requireSandbox(id);
      const deleted = await destroy(sandbox);
      await recordActivity(store.repos, {
        action: 'sandbox.deleted',
        actor,
        subjectType: 'sandbox',
        subjectId: id,
        details: { environmentId: sandbox.environmentId },
      });
      return deleted;
    },

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
        sandbox = await create(environmentId, actor, { countAsUse: false, activity: false });
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
          await destroy(sandbox).catch((err: unknown) => deps.log.warn({ err }, 'probe teardown failed; the reconciler will retry'));
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
