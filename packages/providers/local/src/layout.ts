import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where the provider keeps its state under `<dataDir>/providers/local`. */
export interface Layout {
  root: string;
  images: string;
  layers: string;
  instances: string;
  /** Instance disk files on a filesystem that clones them (FICLONE): a plain dir, or the XFS pool's mount point. */
  disks: string;
  /** The XFS pool's image file, made when the data dir's own filesystem cannot clone files. */
  diskPool: string;
  tmp: string;
  seccomp: string;
  lock: string;
}

export function layoutOf(dataDir: string): Layout {
  const root = join(dataDir, 'providers', 'local');
  return {
    root,
    images: join(root, 'images'),
    layers: join(root, 'layers'),
    instances: join(root, 'instances'),
    disks: join(root, 'disks'),
    diskPool: join(root, 'disks.xfs'),
    tmp: join(root, 'tmp'),
    seccomp: join(root, 'seccomp.bpf'),
    lock: join(root, 'lock'),
  };
}

export async function ensureLayout(layout: Layout): Promise<void> {
  for (const dir of [layout.root, layout.images, layout.layers, layout.instances, layout.tmp]) await mkdir(dir, { recursive: true });
}

/** Short random ids keep overlay mount options (one page) far from their limit. */
export function newId(prefix = ''): string {
  return `${prefix}${randomBytes(8).toString('hex')}`;
}

/** Writes JSON so that readers see the old or the new content, never half of it. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`);
  await rename(temp, path);
}
