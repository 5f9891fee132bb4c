import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';

/** Subtrees the server writes itself and that hold secrets: tightened file by file on start. */
const PRIVATE_SUBTREES = ['db', 'ssh'];

/**
 * Makes the data directory private before anything is written to it: the process umask becomes
 * 077 (so the embedded database's files, WAL included, are created 0600 and its directories 0700),
 * the directory itself 0700, and an older install's `db/`, `ssh/` and top-level files lose their
 * group and other bits. `providers/` keeps the modes its providers give it (image layers must keep
 * theirs); the 0700 directory above it is what keeps others out.
 */
export async function secureDataDir(dataDir: string): Promise<void> {
  process.umask(0o077);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await tightenDataDir(dataDir);
}

/**
 * The tightening alone, run again once the embedded database has opened: PGlite unpacks its
 * initial cluster with explicit 0666/0777 modes, which the umask does not reach.
 */
export async function tightenDataDir(dataDir: string): Promise<void> {
  await tighten(dataDir);
  for (const entry of await readdir(dataDir, { withFileTypes: true })) {
    const full = path.join(dataDir, entry.name);
    if (entry.isFile()) await tighten(full);
    else if (entry.isDirectory() && PRIVATE_SUBTREES.includes(entry.name)) await tightenTree(full);
  }
}

/** Drops group and other bits; symlinks are left alone (chmod would follow them out of the tree). */
async function tighten(file: string): Promise<boolean> {
  const stats = await lstat(file);
  if (stats.isSymbolicLink()) return false;
  if ((stats.mode & 0o077) !== 0) await chmod(file, stats.mode & 0o7700);
  return stats.isDirectory();
}

async function tightenTree(root: string): Promise<void> {
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    if (!(await tighten(dir))) continue;
    for (const entry of await readdir(dir)) pending.push(path.join(dir, entry));
  }
}
