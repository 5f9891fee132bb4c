import type { Sandbox, SetupSession } from '@sandcast/core';

/** A session's sandbox as a terminal target (its shell ends with the sandbox; it has no expiry). */
export interface SandboxTerminalTarget {
  kind: 'sandbox';
  sandbox: Sandbox;
}

/** What a terminal attaches to: a setup session's sandbox, or a session's primary sandbox. */
export type TerminalTarget = SetupSession | SandboxTerminalTarget;

export const isSandboxTarget = (target: TerminalTarget): target is SandboxTerminalTarget => 'kind' in target && target.kind === 'sandbox';
