import { constants } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { exists } from './fs-util.ts';
import { newId } from './layout.ts';
import { mountsUnder } from './overlay.ts';
import { run, runOk } from './proc.ts';

/** Smallest pool made, whatever the host filesystem says (its image is sparse). */
const MIN_POOL_BYTES = 16 * 1024 ** 3;

/**
 * Clones `source` to `target` sharing its blocks (the FICLONE ioctl): instant whatever the size,
 * blocks copied only when one side writes them. Throws where the filesystem cannot clone.
 */
export async function cloneFile(source: string, target: string): Promise<void> {
  await copyFile(source, target, constants.COPYFILE_FICLONE_FORCE | constants.COPYFILE_EXCL);
}

/** Whether files in `dir` (which must exist) can be cloned: a one-byte file is tried. */
export async function supportsReflink(dir: string): Promise<boolean> {
  const probe = join(dir, `.reflink-probe-${newId()}`);
  try {
    await writeFile(probe, 'x');
    await cloneFile(probe, `${probe}.clone`);
    return true;
  } catch {
    return false;
  } finally {
    await rm(probe, { force: true });
    await rm(`${probe}.clone`, { force: true });
  }
}

export async function isMountPoint(dir: string): Promise<boolean> {
  return (await mountsUnder(dir)).includes(dir);
}

/** The size a pool is given (and grown to): that of the filesystem holding its image, so it can never need more than the host has. */
async function poolBytes(image: string): Promise<number> {
  const fs = await statfs(dirname(image));
  const bytes = fs.blocks * fs.bsize;
  return Math.max(MIN_POOL_BYTES, Math.floor(bytes / 1024 ** 2) * 1024 ** 2);
}

/**
 * Mounts the disk pool: a sparse file formatted XFS with reflinks, loop-mounted at `mountPoint`
 * (ADR 0031). Made on first use when `mkfs` exists; found and mounted again after a restart (only
 * the kernel's XFS is needed then); grown when the host filesystem grew. Returns why it could
 * not, or null once mounted.
 */
export async function mountDiskPool(params: { image: string; mountPoint: string; mkfs: string }): Promise<string | null> {
  const { image, mountPoint } = params;
  if (await isMountPoint(mountPoint)) return null;
  const target = await poolBytes(image);
  let grow = false;
  if (!(await exists(image))) {
    if ((await run('/bin/sh', ['-c', 'command -v "$0"', params.mkfs])).code !== 0)
      return `${params.mkfs} is not installed (install it with \`apt-get install xfsprogs\`)`;
    const temp = `${image}.${newId()}.tmp`;
    try {
      await runOk('truncate', ['-s', String(target), temp]);
      // reflink=1 is what the pool is for; the rest is mkfs.xfs's defaults for the size.
      await runOk(params.mkfs, ['-q', '-m', 'reflink=1', temp]);
      await rename(temp, image);
    } catch (error) {
      await rm(temp, { force: true });
      return `formatting the disk pool failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  } else if ((await stat(image)).size < target) {
    await runOk('truncate', ['-s', String(target), image]);
    grow = true;
  }
  await mkdir(mountPoint, { recursive: true });
  const mounted = await run('mount', ['-t', 'xfs', '-o', 'loop,nosuid,nodev,noatime', image, mountPoint]);
  if (mounted.code !== 0) return `mounting the disk pool ${image} failed: ${mounted.stderr.trim()}`;
  // Best effort: a pool that could not grow still works at its old size.
  if (grow) await run('xfs_growfs', ['-d', mountPoint]);
  if (!(await supportsReflink(mountPoint))) {
    await run('umount', [mountPoint]);
    return `the disk pool ${image} does not clone files (formatted without reflink?)`;
  }
  return null;
}

/** Unmounts the pool when nothing holds it (a mounted instance disk does): never lazily. */
export async function unmountDiskPool(mountPoint: string): Promise<boolean> {
  if (!(await isMountPoint(mountPoint))) return true;
  return (await run('umount', [mountPoint])).code === 0;
}
