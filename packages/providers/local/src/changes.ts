import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { FileChange } from '@sandcast/provider-sdk';

type EntryType = FileChange['type'];

function typeOf(stat: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryType {
  if (stat.isFile()) return 'file';
  if (stat.isDirectory()) return 'directory';
  if (stat.isSymbolicLink()) return 'symlink';
  return 'other';
}

const isWhiteout = (stat: { isCharacterDevice(): boolean; rdev: number }) => stat.isCharacterDevice() && stat.rdev === 0;

/**
 * What a setup changed, read from its upper dirs: an entry whose path exists in a lower layer (or
 * the host directory under the built-in base) is `modified`, otherwise `added`; an overlay
 * whiteout is `deleted`. Directories that only exist in the upper dir because a file inside them
 * changed (copy-up parents) are not reported themselves.
 */
export async function listUpperChanges(params: {
  uppers: Array<{ sandboxPath: string; dir: string }>;
  /** Lower directories for a sandbox path prefix, top first. */
  lowersFor: (sandboxPath: string) => string[];
}): Promise<FileChange[]> {
  const changes: FileChange[] = [];
  for (const upper of params.uppers) {
    const lowers = params.lowersFor(upper.sandboxPath);
    const inLower = async (rel: string): Promise<EntryType | null> => {
      for (const lower of lowers) {
        const stat = await lstat(join(lower, rel)).catch(() => null);
        if (!stat) continue;
        return isWhiteout(stat) ? null : typeOf(stat);
      }
      return null;
    };
    const walk = async (rel: string, parentIsNew: boolean): Promise<void> => {
      let entries: Dirent[];
      try {
        entries = await readdir(join(upper.dir, rel), { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const childRel = rel ? `${rel}/${entry.name}` : entry.name;
        const path = posix.join(upper.sandboxPath, childRel);
        if (upper.sandboxPath === '/' && params.uppers.some((u) => u.sandboxPath !== '/' && u.sandboxPath === `/${childRel}`)) continue;
        const stat = await lstat(join(upper.dir, childRel)).catch(() => null);
        if (!stat) continue;
        if (isWhiteout(stat)) {
          changes.push({ path, kind: 'deleted', sizeBytes: null, type: (await inLower(childRel)) ?? 'other' });
          continue;
        }
        const lowerType = parentIsNew ? null : await inLower(childRel);
        const type = typeOf(stat);
        if (type === 'directory') {
          if (lowerType === null) changes.push({ path, kind: 'added', sizeBytes: null, type });
          await walk(childRel, lowerType === null);
          continue;
        }
        changes.push({ path, kind: lowerType === null ? 'added' : 'modified', sizeBytes: type === 'file' ? stat.size : null, type });
      }
    };
    await walk('', false);
  }
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}
