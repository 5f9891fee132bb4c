import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { PassThrough, type Readable, Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { localError } from './errors.ts';

/** Default cap on the uncompressed bytes of an image import (the server's SANDCAST_IMAGE_IMPORT_MAX_BYTES). */
export const DEFAULT_IMPORT_MAX_BYTES = 8 * 1024 ** 3;

export function formatSize(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(bytes % 1024 ** 3 === 0 ? 0 : 1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(bytes % 1024 ** 2 === 0 ? 0 : 1)} MiB`;
  return `${bytes} bytes`;
}

/**
 * Uncompressed bytes an import may read, counted as they stream: the check happens at the byte
 * that crosses the limit, so a gzip bomb is stopped after `limit` bytes, not after it is unpacked.
 */
export class ImportBudget {
  used = 0;

  constructor(
    readonly limit: number,
    /** What is measured, for the refusal: "the archive", "the image". */
    readonly what: string,
  ) {}

  charge(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limit) {
      throw localError(
        'too_large',
        `${this.what} is larger than the import limit of ${formatSize(this.limit)} uncompressed; ` +
          'raise SANDCAST_IMAGE_IMPORT_MAX_BYTES on the server to import it',
      );
    }
  }
}

type Compression = 'gzip' | 'bzip2' | 'xz' | 'zstd';

const MAGIC: Array<[Compression, number[]]> = [
  ['gzip', [0x1f, 0x8b]],
  ['bzip2', [0x42, 0x5a, 0x68]],
  ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
  ['zstd', [0x28, 0xb5, 0x2f, 0xfd]],
];

async function sniff(file: string): Promise<Compression | null> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(6);
    const { bytesRead } = await handle.read(head, 0, 6, 0);
    for (const [kind, magic] of MAGIC) if (bytesRead >= magic.length && magic.every((b, i) => head[i] === b)) return kind;
    return null;
  } finally {
    await handle.close();
  }
}

/** A stream of the file's bytes, decompressed when it starts with a gzip, bzip2, xz or zstd header. */
function decompressed(file: string, kind: Compression | null, what: string, onRead: (position: number) => void): Readable {
  const raw = createReadStream(file, { highWaterMark: 1024 * 1024 });
  let position = 0;
  raw.on('data', (chunk) => {
    position += chunk.length;
    onRead(position);
  });
  if (kind === null) return raw;
  const invalid = (error: Error) => localError('invalid_input', `${what} is not valid ${kind} data: ${error.message}`);
  if (kind === 'gzip') {
    const gunzip = createGunzip();
    const out = new PassThrough();
    raw.on('error', (error) => out.destroy(error));
    gunzip.on('error', (error) => out.destroy(invalid(error)));
    out.on('close', () => {
      raw.destroy();
      gunzip.destroy();
    });
    return raw.pipe(gunzip).pipe(out);
  }
  const child = spawn(kind, ['-dc'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  raw.pipe(child.stdin);
  child.stdin.on('error', () => undefined);
  const out = new PassThrough();
  raw.on('error', (error) => out.destroy(error));
  child.stdout.pipe(out, { end: false });
  let exited: number | null | undefined;
  let drained = false;
  const finish = () => {
    if (exited === undefined || !drained) return;
    if (exited === 0) out.end();
    else out.destroy(invalid(new Error(stderr.trim().slice(-300) || `${kind} exited with ${exited}`)));
  };
  child.stdout.on('end', () => {
    drained = true;
    finish();
  });
  child.on('exit', (code) => {
    exited = code;
    finish();
  });
  child.on('error', (error: NodeJS.ErrnoException) => {
    out.destroy(
      error.code === 'ENOENT'
        ? localError('invalid_input', `${what} is ${kind}-compressed and ${kind} is not installed on the server; decompress it first`)
        : error,
    );
  });
  out.on('close', () => {
    raw.destroy();
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return out;
}

/**
 * Opens an archive file as its uncompressed bytes, charging each one to `budget`. `onRead` gets
 * the fraction of the file read so far (of its compressed size), for progress.
 */
export async function openArchive(
  file: string,
  options: { what: string; budget: ImportBudget; size: number; onRead?: ((fraction: number, bytes: number) => void) | undefined },
): Promise<Readable> {
  const kind = await sniff(file);
  const source = decompressed(file, kind, options.what, (position) =>
    options.onRead?.(options.size ? position / options.size : 1, options.budget.used),
  );
  return charged(source, options.budget);
}

/** `source` with every byte charged to `budget`: the stream fails at the byte that crosses its limit. */
export function charged(source: Readable, budget: ImportBudget): Readable {
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        budget.charge(chunk.length);
        done(null, chunk);
      } catch (error) {
        done(error as Error);
      }
    },
  });
  source.on('error', (error) => counted.destroy(error));
  counted.on('close', () => source.destroy());
  return source.pipe(counted);
}
