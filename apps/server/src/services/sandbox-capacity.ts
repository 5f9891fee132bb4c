import { SandcastError } from '@sandcast/core';
import type { Repositories } from '@sandcast/db';

/**
 * Why `adding` more sandboxes would pass the instance's limit (SANDCAST_MAX_SANDBOXES: sandboxes
 * holding compute or about to — warm-pool members included), or null when they fit. Read before
 * anything is created; requests racing each other may pass it together by the few in flight.
 */
export async function roomFor(repos: Repositories, maxSandboxes: number | null, adding: number): Promise<string | null> {
  if (maxSandboxes === null) return null;
  const live = await repos.sandboxes.countLive();
  if (live + adding <= maxSandboxes) return null;
  return `this server allows ${maxSandboxes} sandboxes at once (warm-pool members included) and ${live} exist; delete some, shrink a warm pool, or raise SANDCAST_MAX_SANDBOXES`;
}

/** Refuses (409 conflict, before anything is created) when `adding` sandboxes do not fit. */
export async function requireRoom(repos: Repositories, maxSandboxes: number | null, adding: number): Promise<void> {
  const reason = await roomFor(repos, maxSandboxes, adding);
  if (reason)
    throw new SandcastError('conflict', `no room for ${adding === 1 ? 'a sandbox' : `${adding} sandboxes`}: ${reason}`, {
      limit: maxSandboxes,
    });
}
