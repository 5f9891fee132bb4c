import { stat } from 'node:fs/promises';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import type { WriteFileOptions } from '@sandcast/provider-sdk';
import { ProviderError, resolveDirInsideRoot } from '@sandcast/provider-sdk';
import * as tar from 'tar-stream';
import { WORKDIR } from './config.ts';
import { PROVIDER_ID, statusOf, toProviderError } from './connection.ts';
import type { ContainerHandle } from './containers.ts';

/** Symlinks followed by readFile before giving up (a loop, most likely). */
const MAX_SYMLINK_HOPS = 8;

/** Absolute, normalised path inside the sandbox; relative paths are taken from the workdir. */
function sandboxPath(path: string): string {
  return posix.normalize(path.startsWith('/') ? path : posix.join(WORKDIR, path));
}

interface ArchiveEntry {
  type: string;
  linkname: string | null;
  data: Buffer;
}

/** Reads the first entry of a tar stream (the object getArchive was asked for). */
function firstEntry(stream: Readable): Promise<ArchiveEntry | null> {
  return new Promise((resolve, reject) => {
    const extract = tar.extract();
    let result: ArchiveEntry | null = null;
    extract.on('entry', (header, body, next) => {
      if (result) {
        body.resume();
        body.on('end', next);
        return;
      }
      const chunks: Buffer[] = [];
      body.on('data', (chunk: unknown) => {
        if (header.type === 'file') chunks.push(chunk as Buffer);
      });
      body.on('end', () => {
        result = { type: header.type ?? 'file', linkname: header.linkname ?? null, data: Buffer.concat(chunks) };
        next();
      });
    });
    extract.on('finish', () => resolve(result));
    extract.on('error', reject);
    stream.on('error', reject);
    stream.pipe(extract);
  });
}

export async function readFile(handle: ContainerHandle, path: string): Promise<Buffer> {
  let target = sandboxPath(path);
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    let archive: Readable;
    try {
      archive = (await handle.container.getArchive({ path: target })) as unknown as Readable;
    } catch (error) {
      if (statusOf(error) === 404) {
        throw new ProviderError({
          provider: PROVIDER_ID,
          code: 'not_found',
          message: `${target} does not exist in the sandbox (or the sandbox is gone)`,
          cause: error,
        });
      }
      throw toProviderError(error, { action: `read ${target}`, engineUrl: handle.engineUrl });
    }
    const entry = await firstEntry(archive);
    if (!entry)
      throw new ProviderError({ provider: PROVIDER_ID, code: 'backend', message: `Docker returned an empty archive for ${target}` });
    if (entry.type === 'file' || entry.type === 'contiguous-file') return entry.data;
    if (entry.type === 'symlink' && entry.linkname) {
      target = posix.normalize(entry.linkname.startsWith('/') ? entry.linkname : posix.join(posix.dirname(target), entry.linkname));
      continue;
    }
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'invalid_config',
      message: `${target} is a ${entry.type}, not a regular file; use exportWorkspace for directories`,
    });
  }
  throw new ProviderError({ provider: PROVIDER_ID, code: 'backend', message: `too many symlinks resolving ${path}` });
}

async function packed(pack: tar.Pack): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function singleFileTar(name: string, data: Buffer, mode: number): Promise<Buffer> {
  const pack = tar.pack();
  pack.entry({ name, size: data.length, mode, mtime: new Date(), uid: 0, gid: 0 }, data);
  pack.finalize();
  return packed(pack);
}

export async function writeFile(handle: ContainerHandle, path: string, data: Buffer, options?: WriteFileOptions): Promise<void> {
  const target = sandboxPath(path);
  const mode = options?.mode ?? 0o644;
  const dir = posix.dirname(target);
  try {
    // Into the parent when it exists (Docker resolves symlinks in it inside the container) …
    await handle.container.putArchive(await singleFileTar(posix.basename(target), data, mode), { path: dir });
    return;
  } catch (error) {
    if (statusOf(error) !== 404) throw toProviderError(error, { action: `write ${target}`, engineUrl: handle.engineUrl });
  }
  try {
    // … otherwise from the root, where Docker creates the missing parents.
    await handle.container.putArchive(await singleFileTar(target.slice(1), data, mode), { path: '/' });
  } catch (error) {
    throw toProviderError(error, {
      action: `write ${target}`,
      what: `sandbox container ${handle.instanceId.slice(0, 12)}`,
      engineUrl: handle.engineUrl,
    });
  }
}

/** A tar stream of `path`'s contents, entries relative to it (`./a.txt`). */
export async function exportWorkspace(handle: ContainerHandle, path = WORKDIR): Promise<Readable> {
  const dir = sandboxPath(path);
  try {
    // A trailing "/." asks Docker for the directory's contents rather than the directory.
    return (await handle.container.getArchive({ path: `${dir === '/' ? '' : dir}/.` })) as unknown as Readable;
  } catch (error) {
    throw toProviderError(error, { action: `export ${dir}`, what: `${dir} in the sandbox`, engineUrl: handle.engineUrl });
  }
}

function directoryTar(name: string): Promise<Buffer> {
  const pack = tar.pack();
  pack.entry({ name, type: 'directory', mode: 0o755, mtime: new Date(), uid: 0, gid: 0 });
  pack.finalize();
  return packed(pack);
}

/** Unpacks a tar stream into `path` (created when missing). */
export async function importWorkspace(handle: ContainerHandle, archive: Readable, path = WORKDIR): Promise<void> {
  const dir = sandboxPath(path);
  try {
    await handle.container.infoArchive({ path: dir });
  } catch (error) {
    if (statusOf(error) !== 404) throw toProviderError(error, { action: `import into ${dir}`, engineUrl: handle.engineUrl });
    try {
      if (dir !== '/') await handle.container.putArchive(await directoryTar(`${dir.slice(1)}/`), { path: '/' });
    } catch (inner) {
      throw toProviderError(inner, {
        action: `create ${dir}`,
        what: `sandbox container ${handle.instanceId.slice(0, 12)}`,
        engineUrl: handle.engineUrl,
      });
    }
  }
  try {
    await handle.container.putArchive(archive, { path: dir });
  } catch (error) {
    throw toProviderError(error, {
      action: `import into ${dir}`,
      what: `sandbox container ${handle.instanceId.slice(0, 12)}`,
      engineUrl: handle.engineUrl,
    });
  }
}

/**
 * The container's merged overlay directory with `path` resolved inside it, while the container
 * runs on this machine's engine. Null where the host cannot see the sandbox's files there: a
 * remote engine, a storage driver without a merged dir, a merged dir this process cannot see (a
 * server in a container), a stopped container, a volume or bind mount at, above or below `path`.
 */
export async function workspaceHostPath(handle: ContainerHandle, path: string): Promise<string | null> {
  if (!handle.engineUrl.startsWith('unix://')) return null;
  let info: Awaited<ReturnType<ContainerHandle['container']['inspect']>>;
  try {
    info = await handle.container.inspect();
  } catch (error) {
    throw toProviderError(error, { action: 'inspect a sandbox', what: `sandbox ${handle.instanceId}`, engineUrl: handle.engineUrl });
  }
  // The typings know only devicemapper's fields; overlay2 reports MergedDir there.
  const merged = (info.GraphDriver?.Data as { MergedDir?: string } | undefined)?.MergedDir;
  if (!info.State.Running || info.State.Paused || !merged) return null;
  const inside = sandboxPath(path);
  const covered = (info.Mounts ?? []).some(
    (mount) => mount.Destination === inside || inside.startsWith(`${mount.Destination}/`) || mount.Destination.startsWith(`${inside}/`),
  );
  if (covered) return null;
  // A server in a container of its own talks to the engine but does not see its mounts.
  if (
    !(await stat(merged).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    return null;
  return resolveDirInsideRoot(PROVIDER_ID, merged, inside);
}
