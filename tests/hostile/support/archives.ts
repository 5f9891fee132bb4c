import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';

/** One tar entry as the hostile archives need them: any type, any name, any mode. */
export interface Entry {
  name: string;
  type?: tar.Header['type'];
  body?: string | Buffer;
  mode?: number;
  linkname?: string;
  devmajor?: number;
  devminor?: number;
  /** Extended (pax) header fields, e.g. a path with bytes a ustar name cannot hold. */
  pax?: Record<string, string>;
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A tar archive of exactly these entries, in this order. */
export async function packTar(entries: Entry[], options: { finalize?: boolean } = {}): Promise<Buffer> {
  const pack = tar.pack();
  // Read while writing: an entry's callback waits until the pack's buffer has room.
  const done = collect(pack as unknown as Readable);
  for (const entry of entries) {
    const type = entry.type ?? 'file';
    // An entry without a buffer waits for its body to be streamed; an empty file gets an empty one.
    const body = entry.body === undefined ? (type === 'file' ? Buffer.alloc(0) : undefined) : Buffer.from(entry.body);
    const header: Parameters<tar.Pack['entry']>[0] = {
      name: entry.name,
      type,
      mode: entry.mode ?? (type === 'directory' ? 0o755 : 0o644),
      uid: 0,
      gid: 0,
      mtime: new Date(0),
      size: body?.length ?? 0,
      ...(entry.linkname === undefined ? {} : { linkname: entry.linkname }),
      ...(entry.devmajor === undefined ? {} : { devmajor: entry.devmajor, devminor: entry.devminor ?? 0 }),
      ...(entry.pax ? { pax: entry.pax } : {}),
    };
    await new Promise<void>((resolve, reject) => {
      const callback = (error?: Error | null) => (error ? reject(error) : resolve());
      if (body !== undefined) pack.entry(header, body, callback);
      else pack.entry(header, callback);
    });
  }
  // Without finalize: no two zero blocks that end an archive, so callers can append more.
  if (options.finalize === false) pack.push(null);
  else pack.finalize();
  return done;
}

/** The host's dash and the libraries it links, as entries: the smallest image that passes the /bin/sh check. */
export function miniRootfsEntries(): Entry[] {
  const shell = '/usr/bin/dash';
  const libs = execFileSync('ldd', [shell], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /(\/\S+)\s+\(0x/.exec(line)?.[1])
    .filter((path): path is string => !!path);
  const dirs = new Set<string>(['bin', 'tmp', 'etc', 'workspace']);
  for (const lib of libs) {
    let dir = dirname(lib).replace(/^\/+/, '');
    while (dir && dir !== '.') {
      dirs.add(dir);
      dir = dirname(dir);
    }
  }
  return [
    ...[...dirs].sort().map((name) => ({ name: `${name}/`, type: 'directory' as const })),
    { name: 'bin/sh', body: readFileSync(shell), mode: 0o755 },
    ...libs.map((lib) => ({ name: lib.replace(/^\/+/, ''), body: readFileSync(lib), mode: 0o755 })),
  ];
}

/** A `docker save` archive: manifest.json, a config, and the given files (layers or anything else). */
export async function dockerSave(options: { manifest: unknown; files: Record<string, Buffer | string>; extra?: Entry[] }): Promise<Buffer> {
  return packTar([
    ...Object.entries(options.files).map(([name, body]) => ({ name, body })),
    ...(options.extra ?? []),
    ...(options.manifest === undefined ? [] : [{ name: 'manifest.json', body: JSON.stringify(options.manifest) }]),
  ]);
}

/** A valid image config for a docker save archive. */
export const CONFIG_JSON = JSON.stringify({ config: { Env: ['PATH=/bin'], WorkingDir: '/workspace' } });

/**
 * A gzip bomb: a rootfs tar.gz whose file `big` says (and holds) `bytes` of zeros, from about a
 * thousandth of that in gzip. Built from concatenated gzip members (valid gzip: readers join them),
 * so making it needs one 64 MiB compression, not `bytes`' worth.
 */
export async function gzipBomb(bytes: number, entries: Entry[]): Promise<Buffer> {
  const chunk = 64 * 1024 * 1024;
  if (bytes % chunk !== 0) throw new Error('the bomb size must be a multiple of 64 MiB');
  const head = await packTar(entries, { finalize: false });
  const header = (await packTar([{ name: 'big', body: '' }], { finalize: false })).subarray(0, 512);
  // The header of `big` rewritten to say `bytes` (tar-stream would want the body in memory).
  const sized = Buffer.from(header);
  sized.write(`${bytes.toString(8).padStart(11, '0')} `, 124, 'latin1');
  let sum = 8 * 32;
  for (let i = 0; i < 512; i++) if (i < 148 || i >= 156) sum += sized[i]!;
  sized.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  const zeros = gzipSync(Buffer.alloc(chunk), { level: 9 });
  const members = [gzipSync(head), gzipSync(sized)];
  for (let i = 0; i < bytes / chunk; i++) members.push(zeros);
  members.push(gzipSync(Buffer.alloc(1024)));
  return Buffer.concat(members);
}
