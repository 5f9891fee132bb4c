import { defineMachine } from './machine.ts';

/**
 * Sandboxes: an API call sets the desired state; what the provider reports is the observed one.
 *
 *   observed: starting ──► running ◄──► paused
 *                 │           │           │
 *                 ▼           ▼           ▼
 *               failed       lost ◄───────┘   (the compute vanished behind our back)
 *                 │           │
 *                 └───────────┴──► deleted   (from every status but deleted)
 */
export const SANDBOX_DESIRED_STATUSES = ['ready', 'paused', 'deleted'] as const;
export type SandboxDesiredStatus = (typeof SANDBOX_DESIRED_STATUSES)[number];

export const SANDBOX_STATUSES = ['starting', 'running', 'paused', 'lost', 'failed', 'deleted'] as const;
export type SandboxStatus = (typeof SANDBOX_STATUSES)[number];

export const sandboxMachine = defineMachine<SandboxStatus>('sandbox', SANDBOX_STATUSES, {
  starting: [
    // The provider created the compute.
    'running',
    // The provider could not create it.
    'failed',
    // Deleted before it came up.
    'deleted',
  ],
  running: [
    // Paused on request (its compute is stopped, its workspace kept).
    'paused',
    // The provider no longer has the compute.
    'lost',
    // The provider reports the compute broken.
    'failed',
    // Deleted on request.
    'deleted',
  ],
  paused: [
    // Resumed.
    'running',
    // The compute vanished while paused.
    'lost',
    // Deleted on request.
    'deleted',
  ],
  lost: [
    // Deleted: its record stays, its compute is already gone.
    'deleted',
  ],
  failed: [
    // Deleted: whatever compute is left is removed.
    'deleted',
  ],
  deleted: [],
});
