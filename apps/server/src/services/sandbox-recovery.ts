import type { SandboxRecovered } from '@sandcast/contracts';
import { type Principal, type Sandbox, SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { FastifyBaseLogger } from 'fastify';
import type { CheckpointsService } from '../checkpoints/checkpoints.service.ts';
import { ensureWorkspace } from '../checkpoints/workspace-dir.ts';
import type { EgressHooks } from '../egress/egress.service.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { recordActivity } from './activity.service.ts';
import { openConfig } from './config-secrets.ts';
import { templateRefOf } from './custom-images/template-ref.ts';
import { requireRegisteredProvider } from './environment-context.ts';
import type { BridgeHooks, SandboxLifecycle } from './sandbox-lifecycle.ts';
import type { SecretBox } from './secrets.ts';
import { runBootstrap } from './sessions/primary-sandbox.ts';

/** How long an operation waits for a recovery another server runs. */
const DEFAULT_WAIT_MS = 10 * 60_000;
/** How often it looks while it waits. */
const DEFAULT_POLL_MS = 100;

export type SandboxRecovery = ReturnType<typeof createSandboxRecovery>;

/** The answer to an operation on compute that was lost: durability `none` has nothing to restore. */
export function computeLost(sandbox: Sandbox, reason: string): SandcastError {
  return new SandcastError(
    'compute_lost',
    `the compute of sandbox ${sandbox.id} is gone (${reason}) and its durability is "${sandbox.spec.durability}", so nothing can be restored; ` +
      'end the session and start a new one, or use an environment with durability "checkpointed" to have it recovered',
    { sandboxId: sandbox.id, durability: sandbox.spec.durability },
  );
}

/**
 * Recovery after compute loss (durability `checkpointed`). One caller fences the lost compute
 * (generation N → N+1, a compare-and-set exactly one server wins), creates replacement compute
 * from the pinned revision, config overrides and image, restores the last attached checkpoint
 * (digests verified), replays the pinned bootstrap commands and marks the sandbox running; every
 * other caller — here or on another server — waits for that outcome and goes on with it.
 */
export function createSandboxRecovery(deps: {
  store: Store;
  providers: ProviderRegistry;
  secrets: SecretBox;
  lifecycle: SandboxLifecycle;
  checkpoints: CheckpointsService;
  log: FastifyBaseLogger;
  /** The replacement gets the egress proxy its containment calls for, before bootstrap runs. */
  egress?: EgressHooks | undefined;
  /** The replacement gets back the host bridge the lost compute had. */
  bridge?: BridgeHooks | undefined;
  /** How long to wait for another server's recovery; default 10 minutes. */
  waitTimeoutMs?: number | undefined;
  pollMs?: number | undefined;
}) {
  const { store } = deps;
  const waitTimeoutMs = deps.waitTimeoutMs ?? DEFAULT_WAIT_MS;
  const pollMs = deps.pollMs ?? DEFAULT_POLL_MS;

  /** What the sandbox was made from, as pinned: the revision's open config with its overrides, and its image. */
  const pinned = async (sandbox: Sandbox) => {
    const registered = requireRegisteredProvider(deps.providers, sandbox.provider);
    const revision = await store.repos.environments.getRevision(sandbox.environmentRevisionId);
    if (!revision) {
      throw new SandcastError(
        'conflict',
        `sandbox ${sandbox.id} cannot be recovered: its pinned environment revision no longer exists; end the session and start a new one`,
      );
    }
    const config = { ...openConfig(revision.config, deps.secrets), ...sandbox.configOverrides };
    const parsed = registered.provider.configSchema.safeParse(config);
    const image = sandbox.imageId ? await store.repos.templates.get(sandbox.imageId) : null;
    return {
      provider: registered.provider,
      config: parsed.success ? (parsed.data as Record<string, unknown>) : config,
      template: image ? templateRefOf(image) : null,
    };
  };

  const fail = async (sandbox: Sandbox, reason: string) => {
    await store.repos.sandboxes.update(sandbox.id, { status: 'failed', failureReason: reason }, { generation: sandbox.generation });
  };

  /** The winner's work, on the sandbox it fenced (generation N+1, `starting`, no compute). */
  const replace = async (lost: Sandbox, fenced: Sandbox, actor: Principal): Promise<SandboxRecovered> => {
    const { provider, config, template } = await pinned(fenced);
    if (lost.providerInstanceId) {
      // Whatever is left of the old compute (a namespace without its overlay) goes first.
      await provider.destroy(lost.providerInstanceId).catch((err: unknown) => deps.log.warn({ err }, 'destroying lost compute failed'));
    }
    let instanceId: string;
    try {
      instanceId = (await provider.create({ sandboxId: fenced.id, environmentId: fenced.environmentId ?? '', config, template }))
        .instanceId;
    } catch (error) {
      await fail(fenced, `replacement compute could not be created: ${(error as Error).message}`);
      throw error;
    }
    const recorded = await store.repos.sandboxes.update(fenced.id, { providerInstanceId: instanceId }, { generation: fenced.generation });
    if (!recorded) {
      await provider.destroy(instanceId).catch(() => undefined);
      throw new SandcastError('conflict', `sandbox ${fenced.id} changed while it was being recovered; try again`);
    }
    const checkpoint = fenced.currentCheckpointId ? await store.repos.checkpoints.get(fenced.currentCheckpointId) : null;
    let failure: string | null = null;
    try {
      await ensureWorkspace(provider, instanceId, fenced.spec.workspacePath);
      await deps.egress?.attach({ kind: 'sandbox', id: fenced.id }, provider, instanceId, fenced.spec.containment);
      if (checkpoint) await deps.checkpoints.restoreOnto(fenced, provider, instanceId, fenced.spec.workspacePath, checkpoint);
      failure = await runBootstrap(provider, fenced.spec, instanceId, { prepareWorkspace: false });
    } catch (error) {
      failure = `the workspace could not be restored: ${(error as Error).message}`;
    }
    if (failure !== null) {
      await fail(fenced, `recovery failed: ${failure}`);
      throw new SandcastError(
        'provider_error',
        `sandbox ${fenced.id} could not be recovered: ${failure}; end the session and start a new one`,
      );
    }
    const recovered: SandboxRecovered = {
      fromGeneration: lost.generation,
      toGeneration: fenced.generation,
      checkpointId: checkpoint?.id ?? null,
      processStateLost: true,
    };
    const running = await store.transaction(async (repos) => {
      const updated = await repos.sandboxes.update(
        fenced.id,
        { status: 'running', failureReason: null, lastActivityAt: new Date() },
        { generation: fenced.generation, statuses: ['starting'] },
      );
      if (updated) {
        await recordActivity(repos, {
          action: 'sandbox.recovered',
          actor,
          subjectType: 'sandbox',
          subjectId: fenced.id,
          details: { ...recovered, instanceId },
        });
      }
      return updated;
    });
    if (!running) throw new SandcastError('conflict', `sandbox ${fenced.id} changed while it was being recovered; try again`);
    deps.bridge
      ?.resume(fenced.id, instanceId)
      ?.catch((err: unknown) => deps.log.warn({ err, sandboxId: fenced.id }, 'the sandbox bridge could not start on the new compute'));
    return recovered;
  };

  /** Waits until the recovery that fenced `from` out is over (here or on another server). */
  const awaitWinner = async (sandboxId: string, from: number): Promise<SandboxRecovered | 'lost_again'> => {
    const deadline = Date.now() + waitTimeoutMs;
    for (;;) {
      const now = await store.repos.sandboxes.get(sandboxId);
      if (!now || now.status === 'deleted') throw new SandcastError('not_found', `no sandbox with id ${sandboxId}`);
      if (now.generation > from && now.status === 'running') {
        return { fromGeneration: from, toGeneration: now.generation, checkpointId: now.currentCheckpointId, processStateLost: true };
      }
      if (now.generation > from && now.status === 'lost') return 'lost_again';
      if (now.status === 'failed') {
        throw new SandcastError('conflict', `sandbox ${sandboxId} could not be recovered: ${now.failureReason ?? 'unknown reason'}`, {
          status: 'failed',
        });
      }
      if (Date.now() > deadline) {
        throw new SandcastError('conflict', `sandbox ${sandboxId} is still being recovered; try again in a moment`, { status: now.status });
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  };

  /** Fences the lost compute and replaces it, or waits for whoever did. */
  const recoverLost = async (sandbox: Sandbox, actor: Principal): Promise<SandboxRecovered> => {
    for (let current = sandbox; ; ) {
      const fenced = await store.transaction(async (repos) => {
        const bumped = await repos.sandboxes.bumpGeneration(current.id, current.generation);
        if (bumped) {
          await recordActivity(repos, {
            action: 'sandbox.instance_lost',
            actor,
            subjectType: 'sandbox',
            subjectId: current.id,
            details: { generation: current.generation, instanceId: current.providerInstanceId, reason: current.failureReason },
          });
        }
        return bumped;
      });
      if (fenced) return replace(current, fenced, actor);
      const outcome = await awaitWinner(current.id, current.generation);
      if (outcome !== 'lost_again') return outcome;
      // The replacement was lost too before this caller used it: recover that one.
      const again = await store.repos.sandboxes.get(current.id);
      if (!again) throw new SandcastError('not_found', `no sandbox with id ${current.id}`);
      current = again;
    }
  };

  return {
    /**
     * Brings a checkpointed sandbox whose compute is gone back: marks it lost (if the caller is
     * the first to learn it), then recovers it once per sandbox. Durability `none` is refused
     * with `compute_lost`.
     */
    async recover(sandbox: Sandbox, reason: string, actor: Principal): Promise<SandboxRecovered> {
      if (sandbox.spec.durability !== 'checkpointed') {
        if (sandbox.status === 'running') await deps.lifecycle.lost(sandbox, reason);
        throw computeLost(sandbox, reason);
      }
      return deps.lifecycle.recovery(sandbox.id, async () => {
        let current = (await store.repos.sandboxes.get(sandbox.id)) ?? sandbox;
        if (current.generation > sandbox.generation && current.status === 'running') {
          return {
            fromGeneration: sandbox.generation,
            toGeneration: current.generation,
            checkpointId: current.currentCheckpointId,
            processStateLost: true,
          } satisfies SandboxRecovered;
        }
        if (current.status === 'running' || current.status === 'stopped') {
          current = (await deps.lifecycle.lost(current, reason)) ?? (await store.repos.sandboxes.get(sandbox.id)) ?? current;
        }
        if (current.status === 'starting') {
          const outcome = await awaitWinner(current.id, current.generation - 1);
          if (outcome !== 'lost_again') return outcome;
          current = (await store.repos.sandboxes.get(sandbox.id)) ?? current;
        }
        if (current.status !== 'lost') {
          throw new SandcastError('conflict', `sandbox ${current.id} is ${current.status}; it cannot be recovered from there`, {
            status: current.status,
          });
        }
        return recoverLost(current, actor);
      });
    },
  };
}
