import type { SandboxRecovered } from '@sandcast/contracts';
import { type Principal, type Sandbox, SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { isProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import type { Clock } from '../clock.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { requireRegisteredProvider } from './environment-context.ts';
import type { SandboxLifecycle } from './sandbox-lifecycle.ts';
import { computeLost, type SandboxRecovery } from './sandbox-recovery.ts';

/**
 * How the sandboxes service reaches a sandbox and its compute: the row a caller may see, the
 * owner check, the provider, and `inRunningSandbox` — an operation on running compute, with the
 * activity touch (ADR 0032, and from memory within a second, ADR 0033), the recovery of lost
 * compute of a checkpointed sandbox, and the refusals that say why anything else cannot run.
 */
export function createComputeAccess(deps: {
  store: Store;
  providers: ProviderRegistry;
  lifecycle: SandboxLifecycle;
  clock: Clock;
  recovery?: SandboxRecovery | undefined;
}) {
  const { store, lifecycle, clock } = deps;

  const requireSandbox = async (id: string): Promise<Sandbox> => {
    const sandbox = await store.repos.sandboxes.get(id);
    // A warm-pool member is nobody's sandbox until a claim hands it out.
    if (!sandbox || sandbox.status === 'deleted' || sandbox.pooled) throw new SandcastError('not_found', `no sandbox with id ${id}`);
    return sandbox;
  };

  const providerOf = (sandbox: Sandbox) => requireRegisteredProvider(deps.providers, sandbox.provider).provider;

  /**
   * The compute is gone: a checkpointed sandbox is recovered onto new compute (once, however many
   * operations find out at the same time); any other is marked lost and refused with `compute_lost`.
   */
  const recoverOrRefuse = async (sandbox: Sandbox, reason: string, actor: Principal): Promise<SandboxRecovered> => {
    if (!deps.recovery) {
      if (sandbox.status === 'running') await lifecycle.lost(sandbox, reason);
      throw computeLost(sandbox, reason);
    }
    return deps.recovery.recover(sandbox, reason, actor);
  };

  /**
   * Whether a provider error means the compute is gone. `not_found` says so; any other provider
   * failure (a command that lost its namespace mid-start reads as a backend error) asks the
   * provider, and the record learns what it says (lost, stopped or failed behind our back).
   */
  const computeGone = async (sandbox: Sandbox, error: unknown): Promise<boolean> => {
    if (!isProviderError(error)) return false;
    if (error.code === 'not_found') return true;
    const seen = await lifecycle.refresh(sandbox).catch(() => sandbox);
    return seen.status === 'lost';
  };

  /** Agents act only on sandboxes created with their own key. */
  const requireUser = (sandbox: Sandbox, actor: Principal, what: string) => {
    if (actor.role !== 'admin' && (actor.keyId === null || sandbox.createdByKeyId !== actor.keyId)) {
      // Another key's session sandbox does not exist as far as this key is told.
      if (sandbox.sessionId !== null) throw new SandcastError('not_found', `no sandbox with id ${sandbox.id}`);
      throw new SandcastError('forbidden', `an agent key can ${what} only sandboxes it created`);
    }
  };

  /** Lost, or a checkpointed sandbox whose compute is being replaced (its generation moved past the first). */
  const inRecovery = (sandbox: Sandbox) =>
    sandbox.status === 'lost' || (sandbox.spec.durability === 'checkpointed' && sandbox.status === 'starting' && sandbox.generation > 1);

  const notRunning = (sandbox: Sandbox) => {
    const next = sandbox.status === 'stopped' ? '; start it first' : '';
    return new SandcastError('conflict', `sandbox ${sandbox.id} is ${sandbox.status}; commands run only in a running sandbox${next}`, {
      status: sandbox.status,
    });
  };

  /**
   * The sandbox as its row says now, after an operation from a remembered row failed: still
   * running on the same instance, the failure stands; changed meanwhile, the answer is what the
   * row says (as the statement would have answered before the operation ran).
   */
  const currentRunning = async (seen: Sandbox, error: unknown): Promise<Sandbox> => {
    const sandbox = await requireSandbox(seen.id);
    if (sandbox.status === 'running' && sandbox.providerInstanceId === seen.providerInstanceId) return sandbox;
    if (sandbox.status === 'running') {
      throw new SandcastError('conflict', `sandbox ${seen.id} moved to new compute while this request ran; try again`, {
        status: sandbox.status,
      });
    }
    if (inRecovery(sandbox) && isProviderError(error)) return sandbox;
    throw notRunning(sandbox);
  };

  /**
   * Runs an operation on the sandbox's compute. Compute found gone — the record says `lost`, or
   * the provider answers that it has no such instance — is recovered first for a checkpointed
   * sandbox (and the operation runs once on the replacement; the answer says so), refused with
   * `compute_lost` otherwise.
   */
  const inRunningSandbox = async <T>(
    id: string,
    actor: Principal,
    run: (provider: SandboxProvider, instanceId: string) => Promise<T>,
  ): Promise<{ value: T; recovered?: SandboxRecovered }> => {
    // An operation through Sandcast is activity: the idle policy counts from the last one. The
    // common case — running, the caller's own — is read and touched in one statement (ADR 0032),
    // and repeats within a second are answered from the store's memory of it (ADR 0033);
    // anything else is read again to say why, recover, or refuse.
    const ownKey = actor.role === 'admin' ? undefined : (actor.keyId ?? null);
    const now = clock.now();
    let sandbox = ownKey === null ? null : store.repos.sandboxes.recentRunning(id, now, ownKey);
    const remembered = sandbox !== null;
    if (ownKey !== null) sandbox ??= await store.repos.sandboxes.touchRunning(id, now, ownKey);
    let recovered: SandboxRecovered | undefined;
    if (!sandbox) {
      sandbox = await requireSandbox(id);
      requireUser(sandbox, actor, 'run commands in');
      if (inRecovery(sandbox)) {
        recovered = await recoverOrRefuse(sandbox, sandbox.failureReason ?? 'the provider no longer has it', actor);
        sandbox = await requireSandbox(id);
      }
      if (sandbox.status !== 'running' || !sandbox.providerInstanceId) throw notRunning(sandbox);
      await store.repos.sandboxes.touch(sandbox.id, clock.now());
    }
    try {
      const value = await run(providerOf(sandbox), sandbox.providerInstanceId!);
      return { value, ...(recovered ? { recovered } : {}) };
    } catch (error) {
      // The remembered row may be up to a second old when another server changed it: the
      // failure is judged against the row as it is now, as if the statement had run.
      if (remembered) sandbox = await currentRunning(sandbox, error);
      // Found lost, or another server already recovering it: the operation joins that recovery.
      const joining = remembered && inRecovery(sandbox);
      if (recovered || (!joining && !(await computeGone(sandbox, error)))) throw error;
      const reason = (error as Error).message;
      recovered = await recoverOrRefuse(sandbox, reason, actor);
      const replaced = await requireSandbox(id);
      if (replaced.status !== 'running' || !replaced.providerInstanceId) {
        throw new SandcastError('conflict', `sandbox ${id} is ${replaced.status} after its recovery; try again`, {
          status: replaced.status,
        });
      }
      return { value: await run(providerOf(replaced), replaced.providerInstanceId), recovered };
    }
  };

  return { requireSandbox, requireUser, providerOf, inRunningSandbox };
}
