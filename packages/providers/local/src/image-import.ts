import { existsSync } from 'node:fs';
import { readdir, readFile, realpath, rm } from 'node:fs/promises';
import { join, posix, relative } from 'node:path';
import { localError } from './errors.ts';
import { removeTree } from './fs-util.ts';
import { DEFAULT_IMAGE_CONFIG, type ImageStore } from './image-store.ts';
import type { ImageConfig, ImageOrigin, ImageRecord, LocalImage, ProgressListener } from './image-types.ts';
import { newId } from './layout.ts';
import { run } from './proc.ts';

interface DockerManifestEntry {
  Config: string;
  Layers: string[];
}

interface DockerImageConfig {
  config?: { Env?: string[] | null; WorkingDir?: string; User?: string } | null;
}

async function tarOk(args: string[], what: string): Promise<string> {
  const result = await run('tar', args);
  if (result.code >= 2 || (result.code !== 0 && !/changed as we read/.test(result.stderr))) {
    throw localError('invalid_config', `${what}: tar says ${result.stderr.trim().slice(-500) || `exit ${result.code}`}`);
  }
  return result.stdout.toString('utf8');
}

/** Deletes `dest/<rel>` only when it resolves inside `dest` (an archive must not reach the host). */
async function removeInside(dest: string, rel: string): Promise<void> {
  const parent = posix.dirname(rel);
  const resolved = await realpath(join(dest, parent)).catch(() => null);
  if (!resolved || relative(dest, resolved).startsWith('..')) return;
  await removeTree(join(resolved, posix.basename(rel)));
}

/** Applies one Docker layer tar onto a directory: whiteouts delete, then the entries are extracted. */
async function applyDockerLayer(dest: string, layerTar: string): Promise<void> {
  const names = (await tarOk(['-tf', layerTar], 'reading an image layer')).split('\n').filter(Boolean);
  for (const raw of names) {
    const name = raw.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (name.split('/').includes('..')) throw localError('invalid_config', `the archive has an unsafe path: ${raw}`);
    const base = posix.basename(name);
    if (base === '.wh..wh..opq') {
      const dir = posix.dirname(name);
      const resolved = await realpath(join(dest, dir)).catch(() => null);
      if (resolved && !relative(dest, resolved).startsWith('..')) {
        for (const child of await readdir(resolved).catch(() => [])) await removeTree(join(resolved, child));
      }
    } else if (base.startsWith('.wh.')) {
      await removeInside(dest, posix.join(posix.dirname(name), base.slice(4)));
    }
  }
  await tarOk(['-xpf', layerTar, '-C', dest, '--numeric-owner', '--exclude=.wh.*', '--exclude=*/.wh.*'], 'extracting an image layer');
}

function configFromDocker(config: DockerImageConfig): ImageConfig {
  const env: Record<string, string> = {};
  for (const pair of config.config?.Env ?? []) {
    const at = pair.indexOf('=');
    if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (!env.PATH) env.PATH = DEFAULT_IMAGE_CONFIG.env.PATH!;
  return { env, workdir: config.config?.WorkingDir || '/workspace', user: config.config?.User || 'root' };
}

/**
 * Imports a rootfs tarball (any compression GNU tar detects) or a `docker save` archive as a
 * single-layer image. Docker layers are applied in order into one directory, whiteouts included,
 * so the imported image never depends on Docker's layer layout.
 */
export async function importImage(
  store: ImageStore,
  options: { tarPath: string; name: string; onProgress?: ProgressListener | undefined },
): Promise<LocalImage> {
  const progress = options.onProgress ?? (() => undefined);
  if (!existsSync(options.tarPath)) throw localError('not_found', `no file at ${options.tarPath}`);
  if (await store.resolve(options.name).catch(() => null)) {
    throw localError('invalid_config', `an image named "${options.name}" already exists; remove it first or choose another name`);
  }
  progress({ phase: 'reading archive', fraction: 0 });
  const listing = (await tarOk(['-tf', options.tarPath], 'reading the archive')).split('\n').map((n) => n.replace(/^\.\//, ''));
  const isDockerSave = listing.includes('manifest.json');
  const dest = await store.stagingDir('import');
  let config = DEFAULT_IMAGE_CONFIG;
  try {
    if (isDockerSave) {
      const unpacked = await store.stagingDir('docker-save');
      try {
        await tarOk(['-xf', options.tarPath, '-C', unpacked], 'unpacking the docker save archive');
        const manifest = JSON.parse(await readFile(join(unpacked, 'manifest.json'), 'utf8')) as DockerManifestEntry[];
        const entry = manifest[0];
        if (!entry) throw localError('invalid_config', 'the docker save archive names no image');
        config = configFromDocker(JSON.parse(await readFile(join(unpacked, entry.Config), 'utf8')) as DockerImageConfig);
        for (const [index, layer] of entry.Layers.entries()) {
          progress({ phase: `applying layer ${index + 1}/${entry.Layers.length}`, fraction: index / entry.Layers.length });
          await applyDockerLayer(dest, join(unpacked, layer));
        }
      } finally {
        await removeTree(unpacked);
      }
    } else {
      progress({ phase: 'extracting rootfs', fraction: 0.1 });
      await tarOk(['-xpf', options.tarPath, '-C', dest, '--numeric-owner'], 'extracting the rootfs');
    }
    if (!existsSync(join(dest, 'bin/sh'))) {
      throw localError('invalid_config', 'the image has no /bin/sh; sandboxes need a POSIX shell at /bin/sh');
    }
    progress({ phase: 'storing layer', fraction: 0.9 });
    return await storeSingleLayerImage(store, dest, options.name, config, 'import');
  } catch (error) {
    await removeTree(dest);
    throw error;
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
  await store.writeImage(record);
  return store.toLocalImage(record);
}

/** The Debian release this machine runs (`VERSION_CODENAME` of /etc/os-release). */
export async function hostDebianRelease(): Promise<string | null> {
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
