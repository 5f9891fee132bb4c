import { defineMachine } from './machine.ts';

/**
 * Sandboxes: an API call (or the idle policy) sets the desired state; the reconciler moves the
 * observed one toward it, one provider step at a time, with compare-and-set writes.
 *
 *   observed: starting ──► running ◄──► stopped
 *                 │  ▲        │           │
 *                 │  └────────┼── lost ◄──┘   (the compute vanished behind our back;
 *                 ▼           ▼    │            a replacement starts again, generation + 1)
 *               failed ◄──────┘    │
 *                 │                │
 *                 └────────────────┴──► deleted   (from every status but deleted)
 */
export const SANDBOX_DESIRED_STATUSES = ['ready', 'stopped', 'deleted'] as const;
export type SandboxDesiredStatus = (typeof SANDBOX_DESIRED_STATUSES)[number];

export const SANDBOX_STATUSES = ['starting', 'running', 'stopped', 'lost', 'failed', 'deleted'] as const;
export type SandboxStatus = (typeof SANDBOX_STATUSES)[number];

export const sandboxMachine = defineMachine<SandboxStatus>('sandbox', SANDBOX_STATUSES, {
  starting: [
    // The provider created (or restarted) the compute.
    'running',
    // The provider could not create it, or a step timed out.
    'failed',
    // The compute vanished before it answered.
    'lost',
    // Deleted before it came up.
    'deleted',
  ],
  running: [
    // Stopped on request or by the idle policy (its compute is stopped, its disk kept).
    'stopped',
    // The provider no longer has the compute.
    'lost',
    // The provider reports the compute broken.
    'failed',
    // Deleted on request.
    'deleted',
  ],
  stopped: [
    // Started again on request: the provider restarts the same compute.
    'starting',
    // The compute vanished while stopped.
    'lost',
    // Deleted on request.
    'deleted',
  ],
  lost: [
    // Replacement compute is being created (the generation goes up).
    'starting',
    // Deleted: its record stays, its compute is already gone.
    'deleted',
  ],
  failed: [
    // Deleted: whatever compute is left is removed.
    'deleted',
  ],
  deleted: [],
});
