import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BUILTIN_IMAGE } from './config.ts';
import { localError } from './errors.ts';
import { removeTree, treeSize } from './fs-util.ts';
import type { ImageConfig, ImageRecord, LayerRecord, LocalImage } from './image-types.ts';
import { type Layout, newId, writeJsonAtomic } from './layout.ts';
import { run, runOk } from './proc.ts';
import { DEFAULT_PATH } from './runtime.ts';

export const DEFAULT_IMAGE_CONFIG: ImageConfig = { env: { PATH: DEFAULT_PATH }, workdir: '/workspace', user: 'root' };

/** Host secrets the built-in base leaves out of its copy of /etc. */
const ETC_EXCLUDES = [
  'etc/shadow',
  'etc/shadow-',
  'etc/gshadow',
  'etc/gshadow-',
  'etc/ssh/ssh_host_*',
  'etc/ssl/private',
  'etc/sudoers',
  'etc/sudoers.d',
  'etc/machine-id',
  'etc/docker',
  'etc/sandcast',
  'etc/credstore*',
  'etc/wireguard',
];
const MAYBE_HOST_DIRS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

/**
 * The on-disk image store: immutable layer directories plus JSON records, all written with
 * temp-file-and-rename so a crash leaves either the old or the new state. A layer directory
 * appears before any image names it; an image record is removed before its unreferenced layers.
 */
export class ImageStore {
  private builtin: Promise<ImageRecord> | null = null;

  constructor(private readonly layout: Layout) {}

  layerDir(id: string): string {
    return join(this.layout.layers, id);
  }

  async readImage(id: string): Promise<ImageRecord | null> {
    if (!/^[A-Za-z0-9._-]+$/.test(id)) return null;
    try {
      return JSON.parse(await readFile(join(this.layout.images, `${id}.json`), 'utf8')) as ImageRecord;
    } catch {
      return null;
    }
  }

  async readLayer(id: string): Promise<LayerRecord | null> {
    try {
      return JSON.parse(await readFile(join(this.layout.layers, `${id}.json`), 'utf8')) as LayerRecord;
    } catch {
      return null;
    }
  }

  async listRecords(): Promise<ImageRecord[]> {
    const names = (await readdir(this.layout.images).catch(() => [])).filter((n) => n.endsWith('.json'));
    const records = await Promise.all(names.map((n) => this.readImage(n.slice(0, -5))));
    return records.filter((r): r is ImageRecord => r !== null).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** An image by id or name; the built-in base is created on first use. */
  async resolve(idOrName: string): Promise<ImageRecord | null> {
    if (idOrName === BUILTIN_IMAGE) return this.ensureBuiltin();
    const byId = await this.readImage(idOrName);
    if (byId) return byId;
    return (await this.listRecords()).find((r) => r.name === idOrName) ?? null;
  }

  async toLocalImage(record: ImageRecord): Promise<LocalImage> {
    const layers = await Promise.all(
      record.layers.map(async (id) => (await this.readLayer(id)) ?? { id, sizeBytes: 0, digest: null, createdAt: record.createdAt }),
    );
    return { ...record, layers, sizeBytes: layers.reduce((sum, l) => sum + l.sizeBytes, 0) };
  }

  /** A fresh staging directory on the store's filesystem (so adopting it is a rename). */
  async stagingDir(prefix: string): Promise<string> {
    const dir = join(this.layout.tmp, newId(`${prefix}-`));
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Turns a finished directory into an immutable layer: rename, then its record. */
  async adoptLayer(dir: string, digest: string | null = null): Promise<LayerRecord> {
    const id = newId();
    await rename(dir, this.layerDir(id));
    const record: LayerRecord = { id, sizeBytes: await treeSize(this.layerDir(id)), digest, createdAt: new Date().toISOString() };
    await writeJsonAtomic(join(this.layout.layers, `${id}.json`), record);
    return record;
  }

  /** Removes a layer no image names (one adopted for an image whose record could not be written). */
  async removeLayer(id: string): Promise<void> {
    await rm(join(this.layout.layers, `${id}.json`), { force: true });
    await removeTree(this.layerDir(id));
  }

  async updateLayer(record: LayerRecord): Promise<void> {
    if (await this.readLayer(record.id)) await writeJsonAtomic(join(this.layout.layers, `${record.id}.json`), record);
  }

  async writeImage(record: ImageRecord): Promise<void> {
    const clash = (await this.listRecords()).find((r) => r.name === record.name && r.id !== record.id);
    if (clash || record.name === BUILTIN_IMAGE) {
      throw localError('invalid_config', `an image named "${record.name}" already exists; remove it first or choose another name`);
    }
    await writeJsonAtomic(join(this.layout.images, `${record.id}.json`), record);
  }

  async deleteImageRecord(id: string): Promise<void> {
    await rm(join(this.layout.images, `${id}.json`), { force: true });
  }

  /** Removes layers no image and no live instance references (orphans of interrupted captures too). */
  async collectLayers(alsoReferenced: Iterable<string>): Promise<string[]> {
    const referenced = new Set<string>(alsoReferenced);
    for (const record of await this.listRecords()) for (const id of record.layers) referenced.add(id);
    const removed: string[] = [];
    for (const name of await readdir(this.layout.layers).catch(() => [])) {
      const id = name.replace(/\.json$/, '').replace(/\..*\.tmp$/, '');
      if (referenced.has(id)) continue;
      await removeTree(join(this.layout.layers, name));
      removed.push(id);
    }
    return [...new Set(removed)];
  }

  ensureBuiltin(): Promise<ImageRecord> {
    this.builtin ??= this.createBuiltin().catch((error: unknown) => {
      this.builtin = null;
      throw error;
    });
    return this.builtin;
  }

  private async createBuiltin(): Promise<ImageRecord> {
    const existing = await this.readImage(BUILTIN_IMAGE);
    if (existing?.layers.every((id) => this.layerExistsSync(id))) return existing;
    const dir = await this.stagingDir('builtin');
    const hostDirs = ['/usr'];
    await mkdir(join(dir, 'usr'));
    for (const name of MAYBE_HOST_DIRS) {
      const stat = await lstat(join('/', name)).catch(() => null);
      if (!stat) continue;
      if (stat.isSymbolicLink()) await symlink(await readlink(join('/', name)), join(dir, name));
      else if (stat.isDirectory()) {
        hostDirs.push(`/${name}`);
        await mkdir(join(dir, name));
      }
    }
    for (const sub of ['proc', 'dev', 'sys', 'run', 'home', 'opt', 'srv', 'mnt', 'media', 'workspace', 'var/cache/apt/archives/partial']) {
      await mkdir(join(dir, sub), { recursive: true });
    }
    for (const sub of ['var/log', 'var/spool', 'var/lib/apt/lists/partial', 'var/mail']) await mkdir(join(dir, sub), { recursive: true });
    await mkdir(join(dir, 'root'), { mode: 0o700 });
    for (const sub of ['tmp', 'var/tmp']) {
      await mkdir(join(dir, sub), { recursive: true });
      await runOk('chmod', ['1777', join(dir, sub)]);
    }
    const excludes = ETC_EXCLUDES.flatMap((p) => ['--exclude', p]);
    const copy = await run('sh', [
      '-c',
      'tar -C / --anchored "$@" -cf - etc $(test -d /var/lib/dpkg && echo var/lib/dpkg) | tar -C "$0" -xpf - --numeric-owner',
      dir,
      ...excludes,
    ]);
    if (copy.code !== 0) throw localError('backend', `copying the host's /etc for the built-in base failed: ${copy.stderr.trim()}`);
    await writeFile(join(dir, 'etc/hostname'), 'sandbox\n');
    await writeFile(join(dir, 'etc/hosts'), '127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n');
    const users = (await readFile(join(dir, 'etc/passwd'), 'utf8').catch(() => 'root:x:0:0:root:/root:/bin/sh\n'))
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(':')[0]);
    const groups = (await readFile(join(dir, 'etc/group'), 'utf8').catch(() => 'root:x:0:\n'))
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(':')[0]);
    await writeFile(join(dir, 'etc/shadow'), users.map((u) => `${u}:*:19000:0:99999:7:::\n`).join(''), { mode: 0o640 });
    await writeFile(join(dir, 'etc/gshadow'), groups.map((g) => `${g}:*::\n`).join(''), { mode: 0o640 });
    const layer = await this.adoptLayer(dir);
    const record: ImageRecord = {
      id: BUILTIN_IMAGE,
      name: BUILTIN_IMAGE,
      layers: [layer.id],
      hostDirs,
      config: DEFAULT_IMAGE_CONFIG,
      origin: 'builtin',
      parentId: null,
      createdAt: new Date().toISOString(),
    };
    await writeJsonAtomic(join(this.layout.images, `${BUILTIN_IMAGE}.json`), record);
    return record;
  }

  private layerExistsSync(id: string): boolean {
    return existsSync(this.layerDir(id));
  }
}
