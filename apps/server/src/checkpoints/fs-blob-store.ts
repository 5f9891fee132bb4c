import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { SandcastError } from '@sandcast/core';
import { isDigest } from './manifest.ts';
import type { BlobStore } from './types.ts';

/** Where the default blob store keeps checkpoint chunks and manifests. */
export const checkpointBlobDir = (dataDir: string): string => path.join(dataDir, 'checkpoints', 'blobs');

/** Refuses anything but a sha256 hex digest, so a blob name can never be a path. */
export function checkedDigest(digest: string): string {
  if (!isDigest(digest)) throw new SandcastError('internal', `not a blob digest: ${JSON.stringify(digest).slice(0, 80)}`);
  return digest;
}

export const blobNotFound = (digest: string) =>
  new SandcastError('not_found', `checkpoint blob ${digest} is not in the blob store; the checkpoint is incomplete — restore another one`, {
    digest,
  });

/**
 * Blobs as files, `<dir>/<first two hex digits>/<digest>`. A put writes a temp file beside its
 * final name and renames it there, so a reader never sees half a blob; a durable put (manifests)
 * also syncs the file and its directory.
 */
export function createFsBlobStore(dir: string): BlobStore {
  const where = (digest: string) => path.join(dir, checkedDigest(digest).slice(0, 2), digest);
  /** Shard directories made by this process, so a put costs no mkdir after the first in its shard. */
  const shards = new Set<string>();
  return {
    async has(digest) {
      return stat(where(digest)).then(
        (s) => s.isFile(),
        () => false,
      );
    },
    async put(digest, data, options) {
      const final = where(digest);
      if (!shards.has(path.dirname(final))) {
        await mkdir(path.dirname(final), { recursive: true, mode: 0o700 });
        shards.add(path.dirname(final));
      }
      const temp = `${final}.tmp-${randomBytes(6).toString('hex')}`;
      const file = await open(temp, 'wx', 0o600);
      try {
        await file.writeFile(data);
        if (options?.durable) await file.sync();
      } finally {
        await file.close();
      }
      try {
        await rename(temp, final);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
      if (options?.durable) {
        const parent = await open(path.dirname(final), 'r');
        try {
          await parent.sync();
        } finally {
          await parent.close();
        }
      }
    },
    async get(digest) {
      return readFile(where(digest)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') throw blobNotFound(digest);
        throw error;
      });
    },
    async delete(digests) {
      for (const digest of digests) await rm(where(digest), { force: true });
    },
  };
}
