/**
 * Setup session lifecycle (a throwaway sandbox an operator prepares an image in).
 *
 *   starting ──► waiting_for_user ──► capturing ──► promoted
 *      │               │                  │
 *      └───────────────┴──────────────────┴──► cancelled | timed_out | failed
 *
 * Terminal states never change again.
 */
export const SETUP_SESSION_STATUSES = [
  'starting',
  'waiting_for_user',
  'capturing',
  'promoted',
  'cancelled',
  'timed_out',
  'failed',
] as const;
export type SetupSessionStatus = (typeof SETUP_SESSION_STATUSES)[number];

/** The statuses during which a session holds its environment's single setup slot. */
export const ACTIVE_SETUP_SESSION_STATUSES = ['starting', 'waiting_for_user', 'capturing'] as const satisfies readonly SetupSessionStatus[];

const TRANSITIONS: Record<SetupSessionStatus, readonly SetupSessionStatus[]> = {
  // The provider handed out a sandbox; it could also fail to, or the operator gave up first.
  starting: ['waiting_for_user', 'failed', 'cancelled', 'timed_out'],
  // The operator clicked Finished, cancelled, walked away past the expiry, or the sandbox was lost.
  waiting_for_user: ['capturing', 'cancelled', 'timed_out', 'failed'],
  // The capture promoted an image, or did not complete. Cancel is refused while capturing.
  capturing: ['promoted', 'failed'],
  promoted: [],
  cancelled: [],
  timed_out: [],
  failed: [],
};

/** UI labels for each status (the operator's vocabulary). */
export const SETUP_SESSION_LABELS: Record<SetupSessionStatus, string> = {
  starting: 'Setup starting',
  waiting_for_user: 'Setup running',
  capturing: 'Capturing template',
  promoted: 'Template captured',
  cancelled: 'Setup cancelled',
  timed_out: 'Setup expired',
  failed: 'Setup failed',
};

export class InvalidTransition extends Error {
  readonly from: string;
  readonly to: string;
  constructor(machine: string, from: string, to: string) {
    super(`${machine}: cannot go from ${from} to ${to}`);
    this.name = 'InvalidTransition';
    this.from = from;
    this.to = to;
  }
}

export function canTransitionSetupSession(from: SetupSessionStatus, to: SetupSessionStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Returns `to` when the edge exists, else throws InvalidTransition. */
export function transitionSetupSession(from: SetupSessionStatus, to: SetupSessionStatus): SetupSessionStatus {
  if (!canTransitionSetupSession(from, to)) throw new InvalidTransition('setup session', from, to);
  return to;
}

export function isActiveSetupSession(status: SetupSessionStatus): boolean {
  return (ACTIVE_SETUP_SESSION_STATUSES as readonly string[]).includes(status);
}
