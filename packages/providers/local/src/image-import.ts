import { lstat, readFile, readlink, rm, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { DEFAULT_IMPORT_MAX_BYTES, formatSize, ImportBudget, openArchive } from './archive-stream.ts';
import { readDockerSave } from './docker-archive.ts';
import { localError } from './errors.ts';
import { removeTree } from './fs-util.ts';
import { DEFAULT_IMAGE_CONFIG, type ImageStore } from './image-store.ts';
import type { ImageConfig, ImageOrigin, ImageRecord, LocalImage, ProgressListener } from './image-types.ts';
import { newId } from './layout.ts';
import { run } from './proc.ts';
import { type ExtractStats, extractTar } from './safe-extract.ts';

export interface ImportOptions {
  /** The archive on disk: a rootfs tarball (gzip, bzip2, xz, zstd or none) or a `docker save` archive. */
  tarPath: string;
  name: string;
  /** Cap on uncompressed bytes, of the archive and of the image it unpacks to. Default 8 GiB. */
  maxBytes?: number | undefined;
  onProgress?: ProgressListener | undefined;
}

/** Progress lines at most every this many uncompressed bytes. */
const PROGRESS_STEP = 32 * 1024 * 1024;

async function extractFile(options: {
  file: string;
  root: string;
  what: string;
  layer: boolean;
  budget: ImportBudget;
  progress: (done: number, bytes: number) => void;
}): Promise<ExtractStats> {
  const { size } = await stat(options.file);
  let reported = 0;
  const source = await openArchive(options.file, {
    what: options.what,
    budget: options.budget,
    size,
    onRead: (fraction, bytes) => {
      if (bytes - reported < PROGRESS_STEP) return;
      reported = bytes;
      options.progress(fraction, bytes);
    },
  });
  return extractTar(source, { root: options.root, what: options.what, layer: options.layer });
}

/** Resolves `path` inside the image root the way the sandbox will see it: symlinks followed, but never out of `root`. */
async function isFileInImage(root: string, path: string): Promise<boolean> {
  let pending = path.split('/').filter(Boolean);
  let resolved: string[] = [];
  for (let hops = 0, part = pending.shift(); part !== undefined; part = pending.shift()) {
    if (part === '.') continue;
    if (part === '..') {
      resolved.pop();
      continue;
    }
    const here = join(root, ...resolved, part);
    const info = await lstat(here).catch(() => null);
    if (!info) return false;
    if (info.isSymbolicLink()) {
      if (++hops > 40) return false;
      const target = await readlink(here);
      if (target.startsWith('/')) resolved = [];
      pending = [...target.split('/').filter(Boolean), ...pending];
      continue;
    }
    resolved.push(part);
    if (pending.length > 0 && !info.isDirectory()) return false;
    if (pending.length === 0) return info.isFile();
  }
  return false;
}

/**
 * Imports a rootfs tarball or a `docker save` archive as a single-layer image. The archive is
 * hostile until proven otherwise: it is unpacked by `extractTar` (no symlink followed, no path
 * outside, no device nodes, no setuid bits), the manifest's paths are resolved inside it, and every
 * uncompressed byte is counted against `maxBytes` as it streams. On any refusal nothing is left:
 * the staging directories are removed and no record is written.
 */
export async function importImage(store: ImageStore, options: ImportOptions): Promise<LocalImage> {
  const progress = options.onProgress ?? (() => undefined);
  const limit = options.maxBytes ?? DEFAULT_IMPORT_MAX_BYTES;
  if (!(await stat(options.tarPath).catch(() => null))?.isFile()) throw localError('not_found', `no file at ${options.tarPath}`);
  if (await store.resolve(options.name).catch(() => null)) {
    throw localError('invalid_config', `an image named "${options.name}" already exists; remove it first or choose another name`);
  }
  const unpacked = await store.stagingDir('import');
  let root = unpacked;
  try {
    progress({ phase: 'unpacking the archive', fraction: 0 });
    const archiveBudget = new ImportBudget(limit, 'the archive');
    const stats = await extractFile({
      file: options.tarPath,
      root: unpacked,
      what: 'the archive',
      layer: false,
      budget: archiveBudget,
      progress: (fraction, bytes) => progress({ phase: `unpacking the archive: ${formatSize(bytes)} read`, fraction: fraction * 0.5 }),
    });
    let config: ImageConfig = DEFAULT_IMAGE_CONFIG;
    const skipped = { special: stats.skippedSpecial, modes: stats.strippedModes };
    if (await lstat(join(unpacked, 'manifest.json')).catch(() => null)) {
      const save = await readDockerSave(unpacked);
      config = save.config;
      root = await store.stagingDir('import-root');
      const imageBudget = new ImportBudget(limit, 'the image');
      for (const [index, layer] of save.layers.entries()) {
        const phase = `applying layer ${index + 1}/${save.layers.length}`;
        const share = (fraction: number) => 0.5 + (0.45 * (index + fraction)) / save.layers.length;
        progress({ phase, fraction: share(0) });
        const layerStats = await extractFile({
          file: layer.file,
          root,
          what: `layer ${posix.normalize(layer.name)}`,
          layer: true,
          budget: imageBudget,
          progress: (fraction, bytes) => progress({ phase: `${phase}: ${formatSize(bytes)} read`, fraction: share(fraction) }),
        });
        skipped.special += layerStats.skippedSpecial;
        skipped.modes += layerStats.strippedModes;
        // Each layer's tar is read once; dropping it now keeps the peak disk use near one image.
        await rm(layer.file, { force: true });
      }
    } else if (stats.entries === 0) {
      throw localError('invalid_input', 'the archive is empty');
    }
    if (!(await isFileInImage(root, 'bin/sh'))) {
      throw localError('invalid_input', 'the image has no /bin/sh; sandboxes need a POSIX shell at /bin/sh');
    }
    const notes = [
      skipped.special ? `${skipped.special} device node(s)/FIFO(s) left out` : '',
      skipped.modes ? `setuid/setgid cleared on ${skipped.modes} file(s)` : '',
    ].filter(Boolean);
    progress({ phase: `storing the layer${notes.length ? ` (${notes.join('; ')})` : ''}`, fraction: 0.95 });
    return await storeSingleLayerImage(store, root, options.name, config, 'import');
  } finally {
    // After a successful store `root` was renamed into the store; what is left here is staging.
    await removeTree(unpacked);
    if (root !== unpacked) await removeTree(root);
  }
}

async function storeSingleLayerImage(
  store: ImageStore,
  dir: string,
  name: string,
  config: ImageConfig,
  origin: ImageOrigin,
): Promise<LocalImage> {
  const layer = await store.adoptLayer(dir);
  const record: ImageRecord = {
    id: newId('img-'),
    name,
    layers: [layer.id],
    hostDirs: [],
    config,
    origin,
    parentId: null,
    createdAt: new Date().toISOString(),
  };
  try {
    await store.writeImage(record);
  } catch (error) {
    await store.removeLayer(layer.id);
    throw error;
  }
  return store.toLocalImage(record);
}

/** The Debian release this machine runs (`VERSION_CODENAME` of /etc/os-release). */
async function hostDebianRelease(): Promise<string | null> {
  const text = await readFile('/etc/os-release', 'utf8').catch(() => '');
  return /^VERSION_CODENAME=("?)([a-z]+)\1$/m.exec(text)?.[2] ?? null;
}

export interface BuildBaseOptions {
  /** Image name; default `debian-<release>`. */
  name?: string | undefined;
  /** Debian release; default the machine's own. */
  release?: string | undefined;
  /** Mirror URL; default debootstrap's. */
  mirror?: string | undefined;
}

/** Builds a Debian base with `debootstrap --variant=minbase`. */
export async function buildDebianBase(store: ImageStore, options: BuildBaseOptions, onProgress?: ProgressListener): Promise<LocalImage> {
  const progress = onProgress ?? (() => undefined);
  const which = await run('/bin/sh', ['-c', 'command -v debootstrap']);
  if (which.code !== 0) {
    throw localError('unavailable', 'debootstrap is not installed; install it with `apt-get install debootstrap` and try again');
  }
  const release = options.release ?? (await hostDebianRelease());
  if (!release) throw localError('invalid_config', 'this machine does not run Debian; pass the release to build (for example bookworm)');
  const name = options.name ?? `debian-${release}`;
  if (await store.resolve(name).catch(() => null)) {
    throw localError('invalid_config', `an image named "${name}" already exists; remove it first or choose another name`);
  }
  const dest = await store.stagingDir('debootstrap');
  try {
    let packages = 0;
    const args = ['--variant=minbase', release, dest, ...(options.mirror ? [options.mirror] : [])];
    const result = await run(which.stdout.toString('utf8').trim(), args, {
      onLine: (line) => {
        if (/^I: (Retrieving|Validating|Extracting|Unpacking|Configuring)/.test(line)) packages++;
        progress({ phase: line.replace(/^I: /, '').slice(0, 120), fraction: Math.min(0.95, packages / 600) });
      },
    });
    if (result.code !== 0) throw localError('backend', `debootstrap failed (exit ${result.code}): ${result.stderr.trim().slice(-800)}`);
    await run('find', [join(dest, 'var/cache/apt/archives'), '-name', '*.deb', '-delete']);
    await rm(join(dest, 'debootstrap'), { recursive: true, force: true });
    progress({ phase: 'storing layer', fraction: 0.97 });
    return await storeSingleLayerImage(store, dest, name, DEFAULT_IMAGE_CONFIG, 'debootstrap');
  } catch (error) {
    await removeTree(dest);
    throw error;
  }
}
