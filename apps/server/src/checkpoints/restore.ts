import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, lchown, lstat, mkdir, open, rename, symlink } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import tar from 'tar-stream';
import { eachLimited } from './chunk-sink.ts';
import { beneath, namesIn, openDirNoFollow, removeBeneath } from './fd-tree.ts';
import { KEPT_MODE_BITS, refuse, verifyChunk } from './manifest.ts';
import type { BlobStore, CheckpointManifest, ManifestEntry } from './types.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

const parentOf = (p: string) => {
  const at = p.lastIndexOf('/');
  return at < 0 ? '' : p.slice(0, at);
};
const nameOf = (p: string) => p.slice(p.lastIndexOf('/') + 1);

/** The manifest as a tree: each directory's children, with directories it implies but does not list. */
function childrenByDir(manifest: CheckpointManifest): Map<string, ManifestEntry[]> {
  const children = new Map<string, ManifestEntry[]>([['', []]]);
  const listed = new Set(manifest.entries.filter((e) => e.type === 'dir').map((e) => e.path));
  const add = (entry: ManifestEntry) => {
    const parent = parentOf(entry.path);
    if (!children.has(parent)) {
      children.set(parent, []);
      if (!listed.has(parent) && parent !== '') add({ path: parent, type: 'dir', mode: 0o755 });
    }
    children.get(parent)!.push(entry);
    if (entry.type === 'dir' && !children.has(entry.path)) children.set(entry.path, []);
  };
  for (const entry of manifest.entries) add(entry);
  return children;
}

const fetchChunk = async (blobs: BlobStore, digest: string) => verifyChunk(digest, await blobs.get(digest));

/**
 * Writes a verified manifest into a fresh directory beside `dir`, then swaps it in: a restore that
 * fails (a corrupt chunk, a full disk) leaves the old workspace as it was. Every write is made
 * relative to a descriptor of its parent and never follows a symlink — the sandbox may be running
 * and may race the restore inside the new tree. Symlinks are created as they are, never followed.
 * A workspace that is a mount point cannot be renamed, nor written beside: the fresh directory
 * goes inside it, and replaces its other contents at the end.
 */
export async function restoreToHostDir(manifest: CheckpointManifest, dir: string, blobs: BlobStore): Promise<CheckpointManifest> {
  const target = path.resolve(dir);
  const parent = await openDirNoFollow(path.dirname(target));
  const base = path.basename(target);
  const suffix = randomBytes(6).toString('hex');
  const staging = `.${base}.restore-${suffix}`;
  let mounted: FileHandle | null = null;
  const written = new Map<string, ManifestEntry>();
  try {
    const existing = await lstat(beneath(parent, base)).catch(() => null);
    if (existing?.isDirectory() && existing.dev !== (await parent.stat()).dev) mounted = await openDirNoFollow(beneath(parent, base));
    const home = mounted ?? parent;
    await mkdir(beneath(home, staging), { mode: 0o700 });
    try {
      const root = await openDirNoFollow(beneath(home, staging));
      try {
        await writeDir(root, '', childrenByDir(manifest), blobs, written);
        await root.chmod(existing?.isDirectory() ? existing.mode & KEPT_MODE_BITS : 0o755);
        // The workspace root keeps the owner it had (the manifest lists what is below it).
        if (existing?.isDirectory()) await giveOwner({ uid: existing.uid, gid: existing.gid }, (uid, gid) => root.chown(uid, gid));
      } finally {
        await root.close();
      }
      if (mounted) await replaceContents(mounted, mounted, staging);
      else await swapIn(parent, base, staging, existing !== null, suffix);
    } catch (error) {
      await removeBeneath(home, staging);
      throw error;
    }
  } finally {
    await Promise.all([parent.close(), mounted?.close()]);
  }
  return { version: 1, entries: manifest.entries.map((entry) => written.get(entry.path) ?? entry) };
}

/** Files written at the same time within one directory. */
const PARALLEL = 8;

async function writeDir(
  dir: FileHandle,
  dirPath: string,
  children: Map<string, ManifestEntry[]>,
  blobs: BlobStore,
  written: Map<string, ManifestEntry>,
): Promise<void> {
  const entries = children.get(dirPath) ?? [];
  await eachLimited(
    entries.filter((entry) => entry.type !== 'dir'),
    PARALLEL,
    (entry) => writeLeaf(dir, entry, blobs, written),
  );
  for (const entry of entries) {
    if (entry.type !== 'dir') continue;
    const at = beneath(dir, nameOf(entry.path));
    await mkdir(at, { mode: 0o700 });
    const child = await openDirNoFollow(at);
    try {
      await writeDir(child, entry.path, children, blobs, written);
      await giveOwner(entry, (uid, gid) => child.chown(uid, gid));
      // Last, so a read-only directory does not refuse its own children.
      await child.chmod(entry.mode & KEPT_MODE_BITS);
    } finally {
      await child.close();
    }
  }
}

/** Writes a file or a symlink; a file's entry is recorded with the inode and times it now has. */
async function writeLeaf(dir: FileHandle, entry: ManifestEntry, blobs: BlobStore, written: Map<string, ManifestEntry>): Promise<void> {
  const at = beneath(dir, nameOf(entry.path));
  if (entry.type === 'symlink') {
    await symlink(entry.target!, at);
    await giveOwner(entry, (uid, gid) => lchown(at, uid, gid));
    return;
  }
  // O_EXCL: whatever appeared under this name (a symlink planted by the sandbox) is never opened.
  const file = await open(at, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try {
    let offset = 0;
    for (const digest of entry.chunks ?? []) {
      const data = await fetchChunk(blobs, digest);
      await file.write(data, 0, data.length, offset);
      offset += data.length;
    }
    if (offset !== entry.size) {
      throw refuse(`the chunks of ${JSON.stringify(entry.path)} hold ${offset} bytes, not ${entry.size}`, { reason: 'size_mismatch' });
    }
    // Before chmod: a chown clears permission bits some kernels treat as privileges.
    await giveOwner(entry, (uid, gid) => file.chown(uid, gid));
    await file.chmod(entry.mode & KEPT_MODE_BITS);
    if (entry.mtimeMs !== undefined) await file.utimes(entry.mtimeMs / 1000, entry.mtimeMs / 1000);
    const now = await file.stat();
    written.set(entry.path, { ...entry, mtimeMs: now.mtimeMs, ctimeMs: now.ctimeMs, ino: now.ino });
  } finally {
    await file.close();
  }
}

/**
 * Gives an entry its recorded owner. Only a root server can give files away; any other keeps
 * them as its own (a checkpoint taken and restored by the same unprivileged user loses nothing).
 */
async function giveOwner(entry: Pick<ManifestEntry, 'uid' | 'gid'>, chown: (uid: number, gid: number) => Promise<void>): Promise<void> {
  if (entry.uid === undefined || entry.gid === undefined || process.getuid?.() !== 0) return;
  await chown(entry.uid, entry.gid);
}

/**
 * Renames the old workspace aside and the restored one in. Where the directory cannot be renamed
 * (a mount point; an overlay directory from a lower layer answers EXDEV) its contents are replaced
 * instead — by then every chunk has been verified and written.
 */
async function swapIn(parent: FileHandle, base: string, staging: string, exists: boolean, suffix: string): Promise<void> {
  const aside = `.${base}.old-${suffix}`;
  if (!exists) {
    await rename(beneath(parent, staging), beneath(parent, base));
    return;
  }
  try {
    await rename(beneath(parent, base), beneath(parent, aside));
  } catch (error) {
    if (!['EXDEV', 'EBUSY', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    const target = await openDirNoFollow(beneath(parent, base));
    try {
      await replaceContents(target, parent, staging);
    } finally {
      await target.close();
    }
    return;
  }
  try {
    await rename(beneath(parent, staging), beneath(parent, base));
  } catch (error) {
    await rename(beneath(parent, aside), beneath(parent, base));
    throw error;
  }
  await removeBeneath(parent, aside);
}

/** Empties `target` (but for `staging` itself) and moves the restored tree, `home/staging`, into it. */
async function replaceContents(target: FileHandle, home: FileHandle, staging: string): Promise<void> {
  const source = await openDirNoFollow(beneath(home, staging));
  try {
    for (const name of await namesIn(target)) if (target !== home || name !== staging) await removeBeneath(target, name);
    for (const name of await namesIn(source)) await rename(beneath(source, name), beneath(target, name));
    await target.chmod((await source.stat()).mode & KEPT_MODE_BITS);
  } finally {
    await source.close();
  }
  await removeBeneath(home, staging);
}

/**
 * The manifest as a tar stream for a provider's importWorkspace. Every chunk is read and checked
 * once before the stream starts (a provider unpacks as it reads, so nothing may reach it before
 * the whole checkpoint is known good), and again as it is packed.
 */
export async function restoreToTar(manifest: CheckpointManifest, blobs: BlobStore): Promise<Readable> {
  const digests = new Set<string>();
  for (const entry of manifest.entries) for (const digest of entry.chunks ?? []) digests.add(digest);
  for (const digest of digests) await fetchChunk(blobs, digest);

  const pack = tar.pack();
  const out = new PassThrough();
  pack.on('error', (error) => out.destroy(error));
  pack.pipe(out);
  void (async () => {
    try {
      const entries = [...childrenByDir(manifest).values()].flat().sort((a, b) => (a.path < b.path ? -1 : 1));
      for (const entry of entries) {
        const mtime = entry.mtimeMs !== undefined ? new Date(entry.mtimeMs) : new Date(0);
        const mode = entry.mode & KEPT_MODE_BITS;
        const owner = entry.uid !== undefined && entry.gid !== undefined ? { uid: entry.uid, gid: entry.gid } : {};
        if (entry.type === 'dir') {
          pack.entry({ name: `${entry.path}/`, type: 'directory', mode, mtime, ...owner });
        } else if (entry.type === 'symlink') {
          pack.entry({ name: entry.path, type: 'symlink', linkname: entry.target!, mode, mtime, ...owner });
        } else {
          await new Promise<void>((resolve, reject) => {
            const body = pack.entry({ name: entry.path, type: 'file', size: entry.size!, mode, mtime, ...owner }, (error) =>
              error ? reject(error) : resolve(),
            );
            void (async () => {
              for (const digest of entry.chunks ?? []) {
                if (!body.write(await fetchChunk(blobs, digest))) await new Promise<void>((r) => body.once('drain', () => r()));
              }
              body.end(undefined);
            })().catch((error: unknown) => {
              body.destroy(error as Error);
              reject(error);
            });
          });
        }
      }
      pack.finalize();
    } catch (error) {
      pack.destroy(error as Error);
    }
  })();
  return out;
}
