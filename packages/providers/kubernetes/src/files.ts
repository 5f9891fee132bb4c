import { posix } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { type ExecChunk, ProviderError, type WriteFileOptions } from '@sandcast/provider-sdk';
import * as tar from 'tar-stream';
import type { Cluster } from './cluster.ts';
import { PROVIDER_ID, WORKDIR } from './config.ts';
import { runExec, startExec, wrapCommand } from './exec.ts';
import { exitCodeOf, openExecSocket } from './exec-socket.ts';

/** Absolute, normalised path inside the sandbox; relative paths are taken from the workdir. */
function sandboxPath(path: string): string {
  return posix.normalize(path.startsWith('/') ? path : posix.join(WORKDIR, path));
}

async function packed(pack: tar.Pack): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The one regular file in a tar stream `tar -ch` made, or what it was instead. */
function onlyFile(archive: Buffer): Promise<{ type: string; data: Buffer } | null> {
  return new Promise((resolve, reject) => {
    const extract = tar.extract();
    let result: { type: string; data: Buffer } | null = null;
    extract.on('entry', (header, body, next) => {
      const chunks: Buffer[] = [];
      body.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
      body.on('end', () => {
        result ??= { type: header.type ?? 'file', data: Buffer.concat(chunks) };
        next();
      });
    });
    extract.on('finish', () => resolve(result));
    extract.on('error', reject);
    extract.end(archive);
  });
}

/** Reads a file as a one-entry tar made in the sandbox (symlinks followed). */
export async function readFile(cluster: Cluster, pod: string, path: string): Promise<Buffer> {
  const target = sandboxPath(path);
  const result = await startExec(cluster, pod, {
    command: ['tar', '-C', posix.dirname(target), '-chf', '-', posix.basename(target)],
    cwd: '/',
  });
  const chunks: Buffer[] = [];
  let stderr = '';
  for await (const chunk of result.output as AsyncIterable<ExecChunk>) {
    if (chunk.stream === 'stdout') chunks.push(chunk.data);
    else stderr += chunk.data.toString('utf8');
  }
  const exit = await result.exit;
  if (exit.exitCode !== 0) {
    const missing = /No such file|Cannot stat|not found/i.test(stderr);
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: missing ? 'not_found' : 'backend',
      message: missing ? `${target} does not exist in the sandbox` : `could not read ${target}: ${stderr.trim().slice(0, 300)}`,
    });
  }
  const entry = await onlyFile(Buffer.concat(chunks));
  if (entry?.type === 'file' || entry?.type === 'contiguous-file') return entry.data;
  throw new ProviderError({
    provider: PROVIDER_ID,
    code: 'invalid_config',
    message: `${target} is a ${entry?.type ?? 'nothing'}, not a regular file; use exportWorkspace for directories`,
  });
}

/** Writes a file by unpacking a one-entry tar in the sandbox, creating its parents. */
export async function writeFile(cluster: Cluster, pod: string, path: string, data: Buffer, options?: WriteFileOptions): Promise<void> {
  const target = sandboxPath(path);
  const pack = tar.pack();
  pack.entry({ name: posix.basename(target), size: data.length, mode: options?.mode ?? 0o644, mtime: new Date() }, data);
  pack.finalize();
  const dir = posix.dirname(target);
  const result = await runExec(cluster, pod, {
    command: ['sh', '-c', 'mkdir -p -- "$1" && exec tar -C "$1" -xof - -p', 'sandcast-write', dir],
    cwd: '/',
    stdin: await packed(pack),
  });
  if (result.exitCode !== 0) {
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'backend',
      message: `could not write ${target}: ${result.stderr.trim().slice(0, 300)}`,
    });
  }
}

/** A tar stream of `path`'s contents, entries relative to it (`./a.txt`), read as the caller reads it. */
export async function exportWorkspace(cluster: Cluster, pod: string, path = WORKDIR): Promise<Readable> {
  const dir = sandboxPath(path);
  const running = await startExec(cluster, pod, { command: ['tar', '-C', dir, '-cf', '-', '.'], cwd: '/', timeoutMs: 3_600_000 });
  const out = new PassThrough();
  let stderr = '';
  void (async () => {
    try {
      for await (const chunk of running.output as AsyncIterable<ExecChunk>) {
        if (chunk.stream === 'stderr') stderr += chunk.data.toString('utf8');
        else if (!out.write(chunk.data)) await new Promise((resolve) => out.once('drain', resolve));
      }
      const exit = await running.exit;
      if (exit.exitCode !== 0) throw new Error(`tar exited ${exit.exitCode}: ${stderr.trim().slice(0, 300)}`);
      out.end();
    } catch (error) {
      out.destroy(
        new ProviderError({ provider: PROVIDER_ID, code: 'backend', message: `could not export ${dir}: ${(error as Error).message}` }),
      );
    }
  })();
  out.on('close', () => {
    if (!out.writableFinished) void running.kill();
  });
  return out;
}

/**
 * Unpacks a tar stream into `path` (created when missing). Over v5 the archive is piped: each frame
 * waits for the socket to take the last, so a slow sandbox slows the reader. Over v4, which cannot
 * signal end of input, the archive is read whole first so the wrapper knows its length.
 */
export async function importWorkspace(cluster: Cluster, pod: string, archive: Readable, path = WORKDIR, streamable = true): Promise<void> {
  const dir = sandboxPath(path);
  const command = ['sh', '-c', 'mkdir -p -- "$1" && exec tar -C "$1" -xof - -p', 'sandcast-import', dir];
  if (!streamable) {
    const chunks: Buffer[] = [];
    for await (const chunk of archive) chunks.push(chunk as Buffer);
    const result = await runExec(cluster, pod, { command, cwd: '/', stdin: Buffer.concat(chunks), timeoutMs: 3_600_000 });
    if (result.exitCode !== 0) throw importError(dir, result.stderr);
    return;
  }
  const socket = await openExecSocket(cluster, { pod, command: wrapCommand({ command, cwd: '/' }, null), stdin: true, tty: false });
  let stderr = '';
  socket.onOutput((channel, data) => {
    if (channel === 'stderr') stderr += data.toString('utf8');
  });
  if (socket.protocol !== 'v5.channel.k8s.io') {
    socket.close();
    return importWorkspace(cluster, pod, archive, path, false);
  }
  for await (const chunk of archive) await socket.writeStdinAndWait(chunk as Buffer);
  socket.closeStdin();
  const status = await socket.done;
  if (!status || exitCodeOf(status) !== 0) throw importError(dir, stderr.replace(/^sandcast-exec-pid=\d+\n/, ''));
}

function importError(dir: string, stderr: string): ProviderError {
  return new ProviderError({
    provider: PROVIDER_ID,
    code: 'backend',
    message: `could not unpack into ${dir}: ${stderr.trim().slice(0, 300)}`,
  });
}
