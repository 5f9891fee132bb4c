import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { exists } from './fs-util.ts';
import { type Layout, newId } from './layout.ts';
import { run, runOk } from './proc.ts';
import { cloneFile, isMountPoint, mountDiskPool, supportsReflink, unmountDiskPool } from './reflink-pool.ts';

/**
 * Where new instance disks go and how they are made:
 * - `native`: the data dir's own filesystem clones files (XFS, btrfs): `disks/` is a plain dir;
 * - `pool`: it does not (ext4): `disks/` is the mount point of the XFS pool (`disks.xfs`);
 * - `copy`: neither; every disk is formatted on create and a fork copies the source's files.
 */
export type DiskMode = 'native' | 'pool' | 'copy';

/** `disks/<id>.img`; blanks and temp files are named otherwise. */
const DISK_FILE = /^((?:sbx|stp)-[0-9a-f]{16})\.img$/;
/** Bumped when the format options change, so older blanks are not cloned any more. */
const BLANK_VERSION = 1;

/** What a record says of its disk: where its file is. */
export interface DiskRef {
  id: string;
  /** The file is `disks/<id>.img` (the cloning store), not `instances/<id>/disk.img`. */
  diskStore?: boolean | undefined;
}

/** mkfs.ext4 for an instance disk: no journal (the upper dir is volatile anyway), no reserved blocks, nothing zeroed. */
async function formatExt4(file: string, sizeMb: number): Promise<void> {
  await runOk('truncate', ['-s', `${sizeMb}M`, file]);
  // The file is fresh and reads as zeros, so the inode tables need no zeroing (noinit_itable at
  // mount): the file stays sparse (measured: 4.3 MB allocated for 10 GiB).
  await runOk('mkfs.ext4', ['-q', '-F', '-O', '^has_journal', '-m', '0', '-E', 'nodiscard,lazy_itable_init=1', file]);
}

/**
 * `nobarrier`: the sandbox's syncs are already no-ops (the overlay is `volatile`), and a cache
 * flush through the loop device is an fsync of the whole disk file, on the pool a flush of the
 * pool too: the freeze before a fork clone took 3.3 s after a 1 GiB write with it, 0.35 s without
 * (ADR 0031). Durability where it matters (a stop) is an fsync of the file after the unmount.
 */
async function mountExt4(file: string, mountPoint: string): Promise<void> {
  await mkdir(mountPoint, { recursive: true });
  await runOk('mount', ['-t', 'ext4', '-o', 'loop,nosuid,nodev,noinit_itable,nobarrier', file, mountPoint]);
}

/**
 * A sandbox's writable layer lives on a filesystem of its own, capped at the config's `diskMb`
 * (ADR 0007): a sparse file holding ext4, loop-mounted. Writing past it fails inside the sandbox
 * with ENOSPC; the host holds at most `diskMb` for it. Unmounting releases the loop device
 * (`mount -o loop` and sandcast-boot's `disk` step set autoclear).
 *
 * Where files can be cloned (ADR 0031), a new disk is a clone of a blank ext4 image formatted
 * once per size, and a fork's disk is a clone of its source's: no mkfs, no copy.
 */
export class InstanceDisks {
  private mode: Promise<DiskMode> | null = null;
  private readonly blanks = new Map<number, Promise<string>>();
  private warned = false;

  constructor(
    private readonly layout: Layout,
    private readonly options: {
      /** False: always the `copy` mode (every disk formatted, forks copy). */
      clones: boolean;
      warn: (message: string) => void;
      /** The XFS formatter, named so a test can take it away. */
      mkfsXfs?: string | undefined;
    },
  ) {}

  /** Decides the mode once (mounting the pool again after a restart); again after `release`. */
  prepare(): Promise<DiskMode> {
    this.mode ??= this.detect().catch((error: unknown) => {
      this.mode = null;
      throw error;
    });
    return this.mode;
  }

  /**
   * After a restart: brings back the disk store a previous run made (the pool is mounted again:
   * kept sandboxes' disks are in it). A data dir that never had a disk gets none until its first
   * sandbox, so a server that never runs a local sandbox mounts nothing.
   */
  async resume(): Promise<void> {
    if (await exists(this.layout.disks)) await this.prepare();
  }

  private async detect(): Promise<DiskMode> {
    if (!this.options.clones) return 'copy';
    const { disks, diskPool, root } = this.layout;
    await mkdir(disks, { recursive: true });
    // A pool made earlier is mounted again first: the disks of kept sandboxes are in it.
    if (!(await exists(diskPool)) && !(await isMountPoint(disks)) && (await supportsReflink(root))) return 'native';
    const failure = await mountDiskPool({ image: diskPool, mountPoint: disks, mkfs: this.options.mkfsXfs ?? 'mkfs.xfs' });
    if (!failure) return 'pool';
    if (!this.warned) {
      this.warned = true;
      this.options.warn(
        `local provider: ${failure}; the data dir's filesystem cannot clone files, so each sandbox disk is formatted on create and a fork copies the source's files (its time grows with the workspace) — install xfsprogs for forks in constant time`,
      );
    }
    return 'copy';
  }

  /** The disk file of an instance. */
  fileOf(ref: DiskRef): string {
    return ref.diskStore ? join(this.layout.disks, `${ref.id}.img`) : join(this.layout.instances, ref.id, 'disk.img');
  }

  /** Whether a fork can clone this instance's disk. */
  async canClone(ref: DiskRef): Promise<boolean> {
    return !!ref.diskStore && (await this.prepare()) !== 'copy';
  }

  /**
   * Makes a new instance's disk file: a clone of the blank of its size, or a freshly formatted
   * file. sandcast-boot mounts it (ADR 0034). Returns the file and whether it is in the disk
   * store (the record keeps that).
   */
  async makeFile(params: { id: string; sizeMb: number }): Promise<{ file: string; diskStore: boolean }> {
    const { id, sizeMb } = params;
    if ((await this.prepare()) === 'copy') {
      const file = this.fileOf({ id });
      await formatExt4(file, sizeMb);
      return { file, diskStore: false };
    }
    const file = this.fileOf({ id, diskStore: true });
    await cloneFile(await this.blank(sizeMb), file);
    return { file, diskStore: true };
  }

  /** Clones a (quiesced) source disk for a new instance `id`, in the disk store. */
  async clone(source: DiskRef, id: string): Promise<void> {
    await this.prepare();
    await cloneFile(this.fileOf(source), this.fileOf({ id, diskStore: true }));
  }

  /** Mounts an instance's existing disk (a stopped sandbox starting, a fork's clone). */
  async mount(ref: DiskRef, mountPoint: string): Promise<void> {
    // The pool may have been released by a close() while this instance was stopped.
    await this.prepare();
    const file = this.fileOf(ref);
    if (!(await exists(file))) throw new Error(`the sandbox's disk ${file} is missing`);
    await mountExt4(file, mountPoint);
  }

  /** Writes an unmounted disk's file through to the host's storage (a stopped sandbox keeps it). */
  async sync(ref: DiskRef): Promise<void> {
    const handle = await open(this.fileOf(ref), 'r+').catch(() => null);
    if (!handle) return;
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /** Removes an instance's disk file from the store (its own dir's goes with the dir). */
  async remove(id: string): Promise<void> {
    if (!DISK_FILE.test(`${id}.img`)) return;
    await this.prepare();
    await rm(join(this.layout.disks, `${id}.img`), { force: true });
  }

  /** After a crash: removes store disks of instances that no longer exist, and unfinished blanks. */
  async collect(instanceIds: Set<string>): Promise<void> {
    if (!this.mode && !(await exists(this.layout.disks))) return;
    if ((await this.prepare()) === 'copy') return;
    for (const name of await readdir(this.layout.disks).catch(() => [])) {
      const id = DISK_FILE.exec(name)?.[1];
      if ((id && !instanceIds.has(id)) || name.endsWith('.tmp')) await rm(join(this.layout.disks, name), { force: true });
    }
  }

  /** Unmounts the pool when no instance disk in it is mounted (it is mounted again on the next use). */
  async release(): Promise<void> {
    if (!this.mode) return;
    const mode = await this.mode.catch(() => null);
    if (mode !== 'pool') return;
    if (await unmountDiskPool(this.layout.disks)) this.mode = null;
  }

  /** The blank ext4 image of a size, formatted once (temp file, then rename) and cloned for every new disk. */
  private blank(sizeMb: number): Promise<string> {
    let made = this.blanks.get(sizeMb);
    if (!made) {
      made = this.makeBlank(sizeMb).catch((error: unknown) => {
        this.blanks.delete(sizeMb);
        throw error;
      });
      this.blanks.set(sizeMb, made);
    }
    return made;
  }

  private async makeBlank(sizeMb: number): Promise<string> {
    const file = join(this.layout.disks, `blank-ext4-v${BLANK_VERSION}-${sizeMb}M`);
    if (await exists(file)) return file;
    const temp = `${file}.${newId()}.tmp`;
    try {
      await formatExt4(temp, sizeMb);
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return file;
  }
}

/**
 * Quiesces a mounted instance disk for a clone of its file: `fsfreeze` flushes what is still in
 * the page cache and holds new writes until `thaw`; the clone then sees a consistent filesystem.
 */
export async function freezeDisk(mountPoint: string): Promise<() => Promise<void>> {
  await runOk('fsfreeze', ['-f', mountPoint]);
  return async () => {
    const thawed = await run('fsfreeze', ['-u', mountPoint]);
    if (thawed.code !== 0 && !/Invalid argument/.test(thawed.stderr))
      throw new Error(`thawing ${mountPoint} failed: ${thawed.stderr.trim()}`);
  };
}
