import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { FileChange } from '@sandcast/provider-sdk';

interface Entry {
  type: FileChange['type'];
  size: number;
  mtimeMs: number;
}

async function scan(root: string): Promise<Map<string, Entry>> {
  const entries = new Map<string, Entry>();
  const walk = async (dir: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(dir, name);
      const stat = await lstat(full);
      const type = stat.isDirectory() ? 'directory' : stat.isFile() ? 'file' : stat.isSymbolicLink() ? 'symlink' : 'other';
      entries.set(`/${path.relative(root, full)}`, { type, size: stat.size, mtimeMs: stat.mtimeMs });
      if (type === 'directory') await walk(full);
    }
  };
  await walk(root);
  return entries;
}

/**
 * Compares a sandbox root against the tree it started from. A sandbox that started from nothing
 * started with an empty `/workspace`, which is not a change.
 */
export async function diffTrees(baseRoot: string | null, currentRoot: string): Promise<FileChange[]> {
  const emptyStart = new Map<string, Entry>([['/workspace', { type: 'directory', size: 0, mtimeMs: 0 }]]);
  const [base, current] = await Promise.all([baseRoot ? scan(baseRoot) : emptyStart, scan(currentRoot)]);
  const changes: FileChange[] = [];
  for (const [p, entry] of current) {
    const before = base.get(p);
    const sizeBytes = entry.type === 'file' ? entry.size : null;
    if (!before) changes.push({ path: p, kind: 'added', sizeBytes, type: entry.type });
    else if (entry.type === 'file' && (before.size !== entry.size || before.mtimeMs !== entry.mtimeMs)) {
      changes.push({ path: p, kind: 'modified', sizeBytes, type: entry.type });
    }
  }
  for (const [p, entry] of base) {
    if (!current.has(p)) changes.push({ path: p, kind: 'deleted', sizeBytes: null, type: entry.type });
  }
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}
