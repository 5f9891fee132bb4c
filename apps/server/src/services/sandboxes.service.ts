import type { ExecBody, ProbeAnswer } from '@sandcast/contracts';
import { InvalidTransition, type Principal, type Sandbox, SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { type ExecProcess, type ExecResult, isProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { recordActivity } from './activity.service.ts';
import { imageMatches } from './custom-images/image-link.ts';
import { templateRefOf } from './custom-images/template-ref.ts';
import { type EnvironmentContextLoader, requireBootable, requireRegisteredProvider } from './environment-context.ts';

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
  /** Closes the sandbox's ports and cuts their forwarded connections (it is being deleted). */
  closePorts?: ((sandboxId: string) => Promise<void>) | undefined;
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
    const image = active && imageMatches(active, ctx) ? active : null;
    const sandbox = await store.transaction(async (repos) => {
      const inserted = await repos.sandboxes.insert({
        environmentId,
        environmentRevisionId: ctx.environment.currentRevision.id,
        imageId: image?.id ?? null,
        provider: ctx.environment.provider,
        createdByRole: actor.role,
        createdByKeyId: actor.keyId,
      });
      if (options.activity) {
        await recordActivity(repos, {
          action: 'sandbox.created',
          actor,
          subjectType: 'sandbox',
          subjectId: inserted.id,
          details: { environmentId, revision: ctx.environment.currentRevision.number, imageId: image?.id ?? null },
        });
      }
      return inserted;
    });
    try {
      const created = await ctx.registered.provider.create({
        sandboxId: sandbox.id,
        environmentId,
        config: ctx.environment.config,
        template: image ? templateRefOf(image) : null,
      });
      const running = await store.repos.sandboxes.update(sandbox.id, { providerInstanceId: created.instanceId, status: 'running' });
      if (image && options.countAsUse) await store.repos.templates.touchLastUsed(image.id);
      return running!;
    } catch (error) {
      await store.repos.sandboxes.update(sandbox.id, { status: 'failed', failureReason: (error as Error).message });
      if (image && isProviderError(error) && error.code === 'not_found') {
        throw new SandcastError(
          'not_found',
          `the active custom image ${image.id} (${image.providerRef}) no longer exists at the provider; disable it or capture a new one`,
        );
      }
      throw error;
    }
  };

  const destroy = async (sandbox: Sandbox) => {
    await store.repos.sandboxes.update(sandbox.id, { desiredStatus: 'deleted' });
    // Its URLs stop answering now, before the compute is gone.
    if (deps.closePorts) await deps.closePorts(sandbox.id);
    else await store.repos.sandboxPorts.deleteAll(sandbox.id);
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
