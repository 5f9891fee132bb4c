import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { posix } from 'node:path';
import { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import tar from 'tar-stream';

type PaxHeaders = tar.Header;
const paxOf = (header: PaxHeaders) => (header.pax ?? undefined) as Record<string, string> | undefined;

function clean(name: string): string {
  return name
    .replace(/^(\.\/)+/, '')
    .replace(/^\/+/, '')
    .replace(/\/+$/, '');
}

/**
 * A layer directory as an uncompressed Docker/OCI layer tar: overlay whiteouts (0/0 character
 * devices) become `.wh.<name>` files and opaque directories (xattr `trusted.overlay.opaque=y`)
 * get a `.wh..wh..opq` entry. GNU tar reads the tree (sorted, numeric owners, so the bytes and
 * thus the digest are reproducible); tar-stream rewrites the entries.
 */
export function dockerLayerTar(cwd: string, what = '.'): Readable {
  const child = spawn(
    'tar',
    [
      '-C',
      cwd,
      '--sort=name',
      '--numeric-owner',
      '--one-file-system',
      '--xattrs',
      '--xattrs-include=trusted.overlay.opaque',
      '-cf',
      '-',
      what,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const extract = tar.extract();
  let closed = false;
  const pack = tar.pack();
  extract.on('entry', (header: PaxHeaders, stream, next) => {
    if (closed) {
      stream.on('error', () => undefined);
      stream.resume();
      return next();
    }
    const name = clean(header.name);
    const skip = () => {
      stream.on('end', () => next());
      stream.resume();
    };
    if (!name) return skip();
    if (header.type === 'character-device' && !header.devmajor && !header.devminor) {
      pack.entry(
        {
          name: posix.join(posix.dirname(name), `.wh.${posix.basename(name)}`),
          type: 'file',
          size: 0,
          mode: 0o644,
          mtime: header.mtime,
        },
        '',
      );
      return skip();
    }
    const opaque = header.type === 'directory' && paxOf(header)?.['SCHILY.xattr.trusted.overlay.opaque'] === 'y';
    const out: PaxHeaders = { ...header, name: header.type === 'directory' ? `${name}/` : name, pax: null };
    if (out.linkname && header.type === 'link') out.linkname = clean(out.linkname);
    const entry = pack.entry(out, (error) => {
      if (!error && opaque) pack.entry({ name: `${name}/.wh..wh..opq`, type: 'file', size: 0, mode: 0o644, mtime: header.mtime }, '');
      next(error);
    });
    // A consumer that stops reading (a cancelled digest) destroys the pack; that is not an error here.
    stream.on('error', () => undefined);
    entry.on('error', () => undefined);
    stream.pipe(entry);
  });
  extract.on('finish', () => {
    if (child.exitCode !== null) finish(child.exitCode);
    else child.on('exit', (code) => finish(code));
  });
  const finish = (code: number | null) => {
    // GNU tar exits 1 for files that changed while read; only 2 is fatal.
    if (code !== null && code >= 2) pack.destroy(new Error(`tar failed: ${stderr.trim().slice(-1000)}`));
    else pack.finalize();
  };
  extract.on('error', (error) => pack.destroy(error));
  child.stdout.pipe(extract as unknown as NodeJS.WritableStream);
  const out = Readable.from(pack);
  out.on('close', () => {
    closed = true;
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return out;
}

/**
 * Writes a stream to a file (or nowhere) and returns its sha256 (`sha256:<hex>`) and size. A
 * source destroyed before its end rejects (premature close): a destroyed stream emits neither
 * 'end' nor 'error', and waiting for those alone once hung the provider's close().
 */
export async function spoolWithDigest(source: Readable, file: string | null): Promise<{ digest: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  source.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    size += chunk.length;
  });
  if (file) await pipeline(source, createWriteStream(file));
  else {
    source.resume();
    await finished(source);
  }
  return { digest: `sha256:${hash.digest('hex')}`, size };
}
