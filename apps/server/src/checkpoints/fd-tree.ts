import { constants } from 'node:fs';
import { type FileHandle, lstat, open, readdir, rmdir, unlink } from 'node:fs/promises';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/**
 * A name inside an open directory, resolved by the kernel from that descriptor: the directories
 * above it are never looked up again, so a component the sandbox renames or swaps for a symlink
 * cannot lead out of the tree (node has no openat; the fd's `/proc/self/fd` link is the directory
 * itself, and only the last component is looked up — not followed where the call does not follow).
 */
export const beneath = (dir: FileHandle, name: string): string => `/proc/self/fd/${dir.fd}/${name}`;

/** The names in an open directory. */
export const namesIn = (dir: FileHandle): Promise<string[]> => readdir(`/proc/self/fd/${dir.fd}`);

/** Opens `path` as a directory, refusing a symlink in its place. */
export const openDirNoFollow = (path: string): Promise<FileHandle> => open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

const code = (error: unknown) => (error as NodeJS.ErrnoException).code ?? '';

/**
 * `rm -rf` of `name` inside `dir` that never leaves it: every level is opened without following
 * symlinks and emptied through its descriptor, so a sandbox swapping a directory for a symlink
 * while it is removed gets its symlink unlinked, never its target's contents. Missing is fine.
 */
export async function removeBeneath(dir: FileHandle, name: string): Promise<void> {
  const at = beneath(dir, name);
  for (let attempt = 0; attempt < 5; attempt++) {
    const stats = await lstat(at).catch(() => null);
    if (!stats) return;
    if (!stats.isDirectory()) {
      try {
        await unlink(at);
        return;
      } catch (error) {
        if (code(error) === 'ENOENT') return;
        if (code(error) !== 'EISDIR' && code(error) !== 'EPERM') throw error;
        continue; // became a directory meanwhile
      }
    }
    let child: FileHandle;
    try {
      child = await openDirNoFollow(at);
    } catch (error) {
      if (['ELOOP', 'ENOTDIR', 'ENOENT'].includes(code(error))) continue; // swapped: look again
      throw error;
    }
    try {
      for (const entry of await namesIn(child)) await removeBeneath(child, entry);
    } finally {
      await child.close();
    }
    try {
      await rmdir(at);
      return;
    } catch (error) {
      if (code(error) === 'ENOENT') return;
      if (code(error) !== 'ENOTEMPTY' && code(error) !== 'EEXIST') throw error;
      // Something was added while it was emptied: another round.
    }
  }
  throw new Error(`could not remove ${name}: it kept changing while it was removed`);
}
