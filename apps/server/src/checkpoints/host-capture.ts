import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, readdir, readlink } from 'node:fs/promises';
import { SandcastError } from '@sandcast/core';
import { type ChunkSink, eachLimited, FixedChunker } from './chunk-sink.ts';
import { beneath, openDirNoFollow } from './fd-tree.ts';
import { KEPT_MODE_BITS } from './manifest.ts';
import type { CheckpointManifest, ManifestEntry } from './types.ts';

/** Deeper trees are cut there (counted as skipped): each level holds a directory descriptor. */
const MAX_DEPTH = 256;
/** Entries of one directory looked at, and files read, at the same time. */
const PARALLEL = 8;
/** How often an entry that changes type while it is read is looked at again before it is skipped. */
const ATTEMPTS = 3;

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;

export interface HostScanOptions {
  sink: ChunkSink;
  chunkBytes: number;
  previous: CheckpointManifest | null;
  /** Test seam: runs between a file's or directory's lstat and its open (where a hostile tree swaps it). */
  beforeOpen?: ((path: string) => Promise<void>) | undefined;
}

export interface HostScan {
  entries: ManifestEntry[];
  /** Fifos, sockets, devices, names that are not UTF-8, entries that kept changing, too-deep subtrees. */
  skipped: number;
}

const isGone = (error: unknown) => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');
const isSwapped = (error: unknown) => ['ELOOP', 'ENOTDIR', 'ENOENT', 'ENXIO'].includes((error as NodeJS.ErrnoException).code ?? '');

/**
 * Walks a host directory without following a symlink anywhere: every entry is lstat'ed through
 * its parent's descriptor, files are opened with O_NOFOLLOW|O_NONBLOCK and checked with fstat
 * before a byte is read. A file whose size, mtime, ctime and inode match `previous` keeps its
 * chunk list without being opened.
 */
export async function scanHostDir(dir: string, options: HostScanOptions): Promise<HostScan> {
  const previous = new Map((options.previous?.entries ?? []).map((entry) => [entry.path, entry]));
  const scan: HostScan = { entries: [], skipped: 0 };
  const root = await openDirNoFollow(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new SandcastError('not_found', `the workspace ${dir} does not exist; nothing to checkpoint`);
    if (error.code === 'ENOTDIR' || error.code === 'ELOOP') {
      throw new SandcastError(
        'unprocessable',
        `the workspace ${dir} is not a directory (a symlink there is never followed); make it a directory again`,
      );
    }
    throw error;
  });
  try {
    await walk(root, '', 0, { ...options, previous, scan });
  } finally {
    await root.close();
  }
  return scan;
}

interface WalkState extends Omit<HostScanOptions, 'previous'> {
  previous: Map<string, ManifestEntry>;
  scan: HostScan;
}

async function walk(dir: FileHandle, prefix: string, depth: number, state: WalkState): Promise<void> {
  const names: string[] = [];
  for (const raw of await readdir(`/proc/self/fd/${dir.fd}`, { encoding: 'buffer' })) {
    const name = raw.toString('utf8');
    // A name that does not survive UTF-8 could not be written back under the same name.
    if (Buffer.from(name, 'utf8').equals(raw)) names.push(name);
    else state.scan.skipped++;
  }
  // Files and links side by side; subdirectories one after another, so the open descriptors stay
  // bounded by the depth plus PARALLEL.
  const subdirs: string[] = [];
  const one = async (name: string, asDir: boolean) => {
    const path = prefix ? `${prefix}/${name}` : name;
    let outcome: Outcome = 'retry';
    for (let attempt = 0; attempt < ATTEMPTS && outcome === 'retry'; attempt++) {
      outcome = await visit(dir, name, path, depth, state, asDir);
      if (outcome === 'dir') {
        subdirs.push(name);
        return;
      }
    }
    if (outcome === 'retry') state.scan.skipped++;
  };
  await eachLimited(names, PARALLEL, (name) => one(name, false));
  for (const name of subdirs.splice(0)) await one(name, true);
}

/** `dir`: a directory met while its siblings are scanned, walked after them. */
type Outcome = 'done' | 'retry' | 'dir';

/** Records one entry; `retry` when it changed under the scan and should be looked at again. */
async function visit(dir: FileHandle, name: string, path: string, depth: number, state: WalkState, walkDir: boolean): Promise<Outcome> {
  const at = beneath(dir, name);
  let stats: Stats;
  try {
    stats = await lstat(at);
  } catch (error) {
    if (isGone(error)) return 'done'; // deleted while scanned: it is not in this checkpoint
    throw error;
  }
  const mode = stats.mode & KEPT_MODE_BITS;
  const owner = { uid: stats.uid, gid: stats.gid };
  if (stats.isSymbolicLink()) {
    const target = await readlink(at, { encoding: 'buffer' }).catch((error: unknown) => {
      if (isSwapped(error) || (error as NodeJS.ErrnoException).code === 'EINVAL') return null;
      throw error;
    });
    if (target === null) return 'retry';
    const text = target.toString('utf8');
    if (Buffer.from(text, 'utf8').equals(target)) state.scan.entries.push({ path, type: 'symlink', mode: 0o777, ...owner, target: text });
    else state.scan.skipped++;
    return 'done';
  }
  if (stats.isDirectory()) {
    if (!walkDir) return 'dir';
    if (depth >= MAX_DEPTH) {
      state.scan.skipped++;
      return 'done';
    }
    await state.beforeOpen?.(path);
    let child: FileHandle;
    try {
      child = await openDirNoFollow(at);
    } catch (error) {
      if (isSwapped(error)) return 'retry';
      throw error;
    }
    try {
      state.scan.entries.push({ path, type: 'dir', mode, ...owner });
      await walk(child, path, depth + 1, state);
    } finally {
      await child.close();
    }
    return 'done';
  }
  if (!stats.isFile()) {
    state.scan.skipped++; // fifo, socket, character or block device
    return 'done';
  }
  const before = state.previous.get(path);
  if (
    before?.type === 'file' &&
    before.chunks &&
    before.size === stats.size &&
    before.mtimeMs === stats.mtimeMs &&
    before.ctimeMs === stats.ctimeMs &&
    before.ino === stats.ino
  ) {
    state.sink.reuse(stats.size);
    state.scan.entries.push({ ...before, mode, ...owner });
    return 'done';
  }
  await state.beforeOpen?.(path);
  let file: FileHandle;
  try {
    // O_NONBLOCK: a fifo swapped in opens at once instead of waiting for a writer.
    file = await open(at, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  } catch (error) {
    if (isSwapped(error)) return 'retry';
    throw error;
  }
  try {
    const opened = await file.stat();
    if (!opened.isFile()) return 'retry'; // swapped for a directory, a fifo, a device: look again
    const chunker = new FixedChunker(state.sink, state.chunkBytes);
    const buffer = Buffer.allocUnsafe(Math.min(state.chunkBytes, 1024 * 1024));
    // Up to the size fstat saw: a file the sandbox keeps growing is taken as it was when opened
    // (its mtime moves, so the next capture reads it again) instead of being read forever.
    for (let left = opened.size; left > 0; ) {
      const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, left), null);
      if (bytesRead === 0) break;
      left -= bytesRead;
      await chunker.push(buffer.subarray(0, bytesRead));
    }
    const chunks = await chunker.end();
    // What the next scan compares is what was true before the read: a write during it moves the
    // mtime past this, so the next capture reads the file again.
    state.scan.entries.push({
      path,
      type: 'file',
      mode: opened.mode & KEPT_MODE_BITS,
      uid: opened.uid,
      gid: opened.gid,
      size: chunker.size,
      chunks,
      mtimeMs: opened.mtimeMs,
      ctimeMs: opened.ctimeMs,
      ino: opened.ino,
    });
    return 'done';
  } finally {
    await file.close();
  }
}
