import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Bytes of regular files and symlinks under a directory (lstat, never following links). */
export async function treeSize(dir: string): Promise<number> {
  let total = 0;
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await treeSize(path);
    else if (entry.isFile() || entry.isSymbolicLink()) total += (await lstat(path)).size;
  }
  return total;
}

/** rm -rf that never follows symlinks and never throws for a missing path. */
export async function removeTree(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true, maxRetries: 3 });
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
