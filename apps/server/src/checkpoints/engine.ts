import { SandcastError } from '@sandcast/core';
import { ChunkSink } from './chunk-sink.ts';
import { scanHostDir } from './host-capture.ts';
import {
  chunksOf,
  DEFAULT_CHUNK_BYTES,
  manifestBytes,
  parseManifest,
  sha256,
  sortEntries,
  validateManifest,
  verifyManifestDigest,
} from './manifest.ts';
import { restoreToHostDir, restoreToTar } from './restore.ts';
import { scanTar } from './tar-capture.ts';
import type { BlobStore, CaptureResult, CheckpointEngine, CheckpointManifest, ManifestEntry, WorkspaceSource } from './types.ts';

export interface CheckpointEngineOptions {
  blobs: BlobStore;
  /** Fixed chunk size in bytes; default 4 MiB (decision 0022). */
  chunkBytes?: number | undefined;
}

const sameContent = (a: ManifestEntry, b: ManifestEntry) =>
  a.type === b.type &&
  a.mode === b.mode &&
  a.uid === b.uid &&
  a.gid === b.gid &&
  a.target === b.target &&
  a.size === b.size &&
  (a.chunks ?? []).join() === (b.chunks ?? []).join();

/**
 * Paths added or changed in `entries` (type, mode, owner, link target or bytes; a touch alone is not a
 * change), plus those of `previous` that are gone.
 */
function countChanges(entries: readonly ManifestEntry[], previous: CheckpointManifest | null): number {
  const before = new Map((previous?.entries ?? []).map((entry) => [entry.path, entry]));
  let changed = 0;
  for (const entry of entries) {
    const old = before.get(entry.path);
    if (!old || !sameContent(old, entry)) changed++;
    before.delete(entry.path);
  }
  return changed + before.size;
}

/**
 * Content-addressed, incremental workspace checkpoints (ARCHITECTURE §4): a capture stores only
 * the chunks the blob store lacks and a manifest of every path; a restore verifies the manifest
 * and every chunk before the target sees them.
 */
export function createCheckpointEngine(options: CheckpointEngineOptions): CheckpointEngine {
  const { blobs } = options;
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1024) throw new RangeError('chunkBytes must be an integer of at least 1024');

  const capture = async (source: WorkspaceSource, previous: CheckpointManifest | null): Promise<CaptureResult> => {
    const sink = new ChunkSink(blobs);
    const scan =
      source.kind === 'host-dir'
        ? await scanHostDir(source.dir, { sink, chunkBytes, previous })
        : await scanTar(await source.open(), { sink, chunkBytes });
    const manifest: CheckpointManifest = { version: 1, entries: sortEntries(scan.entries) };
    validateManifest(manifest);
    const bytes = manifestBytes(manifest);
    const manifestDigest = sha256(bytes);
    let storedBytes = sink.storedBytes;
    if (!(await blobs.has(manifestDigest))) {
      await blobs.put(manifestDigest, bytes, { durable: true });
      storedBytes += bytes.length;
    }
    return {
      manifest,
      manifestDigest,
      newChunks: sink.newChunks,
      storedBytes,
      totalBytes: sink.totalBytes,
      fileCount: manifest.entries.filter((entry) => entry.type === 'file').length,
      changedPaths: countChanges(manifest.entries, previous),
      skipped: scan.skipped,
    };
  };

  return {
    capture,
    async restore(manifest, manifestDigest, target) {
      validateManifest(manifest);
      verifyManifestDigest(manifest, manifestDigest);
      if (target.kind === 'host-dir') return { asWritten: await restoreToHostDir(manifest, target.dir, blobs) };
      await target.write(await restoreToTar(manifest, blobs));
      return { asWritten: null };
    },
    chunksOf,
    async loadManifest(manifestDigest) {
      const data = await blobs.get(manifestDigest).catch((error: unknown) => {
        if (error instanceof SandcastError) throw error;
        throw new SandcastError('not_found', `checkpoint manifest ${manifestDigest} is not in the blob store`);
      });
      return parseManifest(data, manifestDigest);
    },
  };
}
