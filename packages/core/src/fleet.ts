import type { FleetReservation, Sandbox } from './custom-image.ts';

/**
 * Resource sandboxes ("the fleet"): sandboxes a session with the `sandbox_fleet` capability
 * creates beside its primary one, addressed by a logical id scoped to the session (`rsb_…`),
 * never by the sandbox id or the provider's.
 */
export const FLEET_ID_PREFIX = 'rsb';

/** What `sandbox_manage` may ask of a resource sandbox. */
export const FLEET_MANAGE_ACTIONS = ['stop', 'start', 'delete', 'restore'] as const;
export type FleetManageAction = (typeof FLEET_MANAGE_ACTIONS)[number];

/** The one refusal for an id this session did not create, whether or not it exists elsewhere. */
export const FLEET_NOT_OURS_MESSAGE = 'Sandbox was not created by this Session';

/** A config that declares no limit still reserves this much: an unlimited sandbox never escapes the totals. */
export const FLEET_DEFAULT_RESERVATION: FleetReservation = { cpu: 1, memoryMb: 1024 };

/** What a provider config reserves: its `cpu` and `memoryMb` when it declares them, the default otherwise. */
export function fleetReservationOf(config: Record<string, unknown>): FleetReservation {
  const cpu = typeof config.cpu === 'number' && config.cpu > 0 ? config.cpu : FLEET_DEFAULT_RESERVATION.cpu;
  const memoryMb = typeof config.memoryMb === 'number' && config.memoryMb > 0 ? config.memoryMb : FLEET_DEFAULT_RESERVATION.memoryMb;
  return { cpu, memoryMb };
}

/**
 * Why an operator should look at a sandbox:
 * - `lost`: the provider no longer has its compute;
 * - `failed`: it could not be created, booted or kept;
 * - `idle_running`: running with no operation through Sandcast for longer than its idle window;
 * - `cleanup_failed`: it should be gone (deleted, or its session ended) and its compute is not.
 */
export const SANDBOX_ATTENTION_FLAGS = ['lost', 'failed', 'idle_running', 'cleanup_failed'] as const;
export type SandboxAttentionFlag = (typeof SANDBOX_ATTENTION_FLAGS)[number];

/** The attention flags of a sandbox at `now`; `sessionEnded` when its session is over. */
export function sandboxAttention(sandbox: Sandbox, now: Date, sessionEnded: boolean): SandboxAttentionFlag[] {
  const flags: SandboxAttentionFlag[] = [];
  if (sandbox.status === 'lost') flags.push('lost');
  if (sandbox.status === 'failed') flags.push('failed');
  const idleMs = now.getTime() - Date.parse(sandbox.lastActivityAt);
  if (sandbox.status === 'running' && sandbox.desiredStatus === 'ready' && idleMs > sandbox.spec.lifecycle.idleAfterSeconds * 1000) {
    flags.push('idle_running');
  }
  const shouldBeGone = sandbox.desiredStatus === 'deleted' || sessionEnded;
  if (shouldBeGone && sandbox.status !== 'deleted' && sandbox.providerInstanceId !== null) flags.push('cleanup_failed');
  return flags;
}
