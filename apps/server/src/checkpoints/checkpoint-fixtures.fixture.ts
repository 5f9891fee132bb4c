import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore } from './types.ts';

/** A blob store wrapper that counts what reaches the store underneath. */
export function countingStore(inner: BlobStore) {
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
