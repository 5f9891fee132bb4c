import { createHash, randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createCheckpointEngine } from '../engine.ts';
import { checkpointBlobDir, createFsBlobStore } from '../fs-blob-store.ts';
import type { BlobStore } from '../types.ts';

/** A blob store wrapper that counts what reaches the store underneath. */
function countingStore(inner: BlobStore) {
  const counts = { puts: 0, putBytes: 0, gets: 0 };
  const store: BlobStore = {
    has: (digest) => inner.has(digest),
    put: async (digest, data, options) => {
      counts.puts++;
      counts.putBytes += data.length;
      await inner.put(digest, data, options);
    },
    get: async (digest) => {
      counts.gets++;
      return inner.get(digest);
    },
    delete: (digests) => inner.delete(digests),
  };
  return { store, counts };
}

/** Every path under `dir` with its type, permission bits and content hash or link target. */
export async function describeTree(dir: string): Promise<string[]> {
  const lines: string[] = [];
  const walk = async (rel: string) => {
    for (const name of (await readdir(path.join(dir, rel))).sort()) {
      const child = rel ? `${rel}/${name}` : name;
      const full = path.join(dir, child);
      const stats = await lstat(full);
      const mode = (stats.mode & 0o7777).toString(8);
      if (stats.isSymbolicLink()) lines.push(`${child} symlink -> ${await readlink(full)}`);
      else if (stats.isDirectory()) {
        lines.push(`${child} dir ${mode}`);
        await walk(child);
      } else
        lines.push(
          `${child} file ${mode} ${createHash('sha256')
            .update(await readFile(full))
            .digest('hex')
            .slice(0, 16)}`,
        );
    }
  };
  await walk('');
  return lines;
}

/** A temp directory for the test file (removed after it) and fresh directories and engines in it. */
export function useScratch() {
  let scratch = '';
  let counter = 0;
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'sandcast-ckpt-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });
  const fresh = async (name: string) => {
    const dir = path.join(scratch, `${name}-${counter++}`);
    await mkdir(dir, { recursive: true });
    return dir;
  };
  /** An engine over a counting filesystem blob store. */
  const setup = async (chunkBytes?: number) => {
    const { store, counts } = countingStore(createFsBlobStore(checkpointBlobDir(await fresh('data'))));
    return { blobs: store, counts, engine: createCheckpointEngine({ blobs: store, chunkBytes }) };
  };
  return { fresh, setup };
}

export const hostDir = (dir: string) => ({ kind: 'host-dir' as const, dir });

/** A `beforeOpen` hook that notes the files (not the directories) a scan opens. */
export const filesOpened = (root: string, into: string[]) => async (p: string) => {
  if ((await lstat(path.join(root, p))).isFile()) into.push(p);
};

/** `describeTree` of a tree as a restore gives it back: setuid and setgid dropped. */
export const withoutSetid = (lines: string[]) => lines.map((line) => line.replace(/ file ([67])(\d{3}) /, ' file $2 '));

/** A tree with one of everything a workspace holds. */
export async function richTree(dir: string) {
  await mkdir(path.join(dir, 'src/nested/deeper'), { recursive: true });
  await mkdir(path.join(dir, 'empty'));
  await mkdir(path.join(dir, 'locked'));
  await writeFile(path.join(dir, 'src/main.ts'), 'console.log(1);\n');
  await writeFile(path.join(dir, 'src/nested/deeper/data.bin'), randomBytes(10_000));
  await writeFile(path.join(dir, 'empty-file'), '');
  await writeFile(path.join(dir, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  await writeFile(path.join(dir, 'suid'), 'x');
  await chmod(path.join(dir, 'suid'), 0o6755);
  await writeFile(path.join(dir, 'locked/secret'), 'private', { mode: 0o600 });
  await chmod(path.join(dir, 'locked'), 0o500);
  await symlink('src/main.ts', path.join(dir, 'link-relative'));
  await symlink('/etc', path.join(dir, 'link-out'));
  await symlink('does/not/exist', path.join(dir, 'link-dangling'));
}
