/**
 * Sandboxes: an API call sets the desired state; what the provider reports is the observed one.
 *
 *   observed: starting ──► running ──► deleted
 *                 │           │
 *                 ▼           ▼
 *               failed       lost   (the compute vanished behind our back)
 */
export const SANDBOX_DESIRED_STATUSES = ['ready', 'paused', 'deleted'] as const;
export type SandboxDesiredStatus = (typeof SANDBOX_DESIRED_STATUSES)[number];

export const SANDBOX_STATUSES = ['starting', 'running', 'paused', 'lost', 'failed', 'deleted'] as const;
export type SandboxStatus = (typeof SANDBOX_STATUSES)[number];
