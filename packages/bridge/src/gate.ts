/** The two transports of the bridge. */
export const TRANSPORTS = ['duplex_v1', 'queue_v1'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** Why the gate chose the file bridge. */
export type GateReason = 'gate_off' | 'capability_absent';

export type TransportDecision = { transport: 'duplex_v1' } | { transport: 'queue_v1'; reason: GateReason };

/**
 * Duplex only when the instance setting (`experimental.enableSandboxDuplexBridge`, the kill
 * switch) and the provider capability (`duplexCommandStream`) are both exactly `true`; anything
 * else — false, missing, `"true"`, 1 — is the file bridge. The setting is asked first.
 */
export function decideTransport(input: { settingEnabled: unknown; capability: unknown }): TransportDecision {
  if (input.settingEnabled !== true) return { transport: 'queue_v1', reason: 'gate_off' };
  if (input.capability !== true) return { transport: 'queue_v1', reason: 'capability_absent' };
  return { transport: 'duplex_v1' };
}
