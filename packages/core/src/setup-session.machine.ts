import { defineMachine } from './machine.ts';

/**
 * Setup session lifecycle (a throwaway sandbox an operator prepares an image in).
 *
 *   starting ──► waiting_for_user ──► capturing ──► promoted
 *      │               │                  │
 *      ├───────────────┴──────────────────┴──► failed
 *      └───────────────┴──► cancelled | timed_out
 *
 * Terminal states never change again. A capture cannot be cancelled or time out.
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

export const setupSessionMachine = defineMachine<SetupSessionStatus>('setup session', SETUP_SESSION_STATUSES, {
  starting: [
    // The provider handed out a setup sandbox.
    'waiting_for_user',
    // The provider could not start one, or the server stopped while it was starting.
    'failed',
    // The operator gave up before the sandbox was ready.
    'cancelled',
    // Nobody came back before the expiry.
    'timed_out',
  ],
  waiting_for_user: [
    // The operator clicked Finished: the provider captures the sandbox.
    'capturing',
    // The operator cancelled; the sandbox is thrown away.
    'cancelled',
    // The operator walked away past the expiry.
    'timed_out',
    // The sandbox was lost (the provider no longer has it).
    'failed',
  ],
  capturing: [
    // The capture completed and its image became the environment's active one.
    'promoted',
    // The capture, or promoting its image, did not complete; the active image is untouched.
    'failed',
  ],
  promoted: [],
  cancelled: [],
  timed_out: [],
  failed: [],
});

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

export function isActiveSetupSession(status: SetupSessionStatus): boolean {
  return (ACTIVE_SETUP_SESSION_STATUSES as readonly string[]).includes(status);
}
