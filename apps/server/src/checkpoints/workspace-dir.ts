import { Readable } from 'node:stream';
import { SandcastError } from '@sandcast/core';
import type { SandboxProvider } from '@sandcast/provider-sdk';

/** An empty tar archive: two zero blocks. */
const EMPTY_TAR = Buffer.alloc(1024);

/** How long emptying a workspace before a tar restore may take. */
const CLEAR_TIMEOUT_MS = 5 * 60_000;

/**
 * Makes the workspace directory on the compute if it is not there, through the provider's own
 * import (every provider creates the target directory), so no path is ever resolved on the host.
 */
export async function ensureWorkspace(provider: SandboxProvider, instanceId: string, path: string): Promise<void> {
  await provider.importWorkspace(instanceId, Readable.from([EMPTY_TAR]), path);
}

/**
 * Empties the workspace inside the sandbox (a tar restore only adds; what the checkpoint lacks
 * must go first). Runs with the workspace as working directory, so the sandbox resolves the path.
 */
export async function clearWorkspace(provider: SandboxProvider, instanceId: string, path: string): Promise<void> {
  await ensureWorkspace(provider, instanceId, path);
  const cleared = await provider.exec(instanceId, {
    command: ['find', '.', '-mindepth', '1', '-delete'],
    cwd: path,
    timeoutMs: CLEAR_TIMEOUT_MS,
  });
  if (cleared.exitCode !== 0 || cleared.timedOut) {
    throw new SandcastError(
      'provider_error',
      `the workspace ${path} could not be emptied for the restore: ${cleared.timedOut ? 'timed out' : cleared.stderr.trim().slice(-500)}`,
    );
  }
}
