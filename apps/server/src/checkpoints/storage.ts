import path from 'node:path';
import type { ServerConfig } from '../config.ts';
import { createCheckpointEngine } from './engine.ts';
import { createFsBlobStore } from './fs-blob-store.ts';
import { createS3BlobStore } from './s3-blob-store.ts';
import type { BlobStore, CheckpointEngine } from './types.ts';

/** The checkpoint engine and the blob store it writes to. */
export interface CheckpointStorage {
  engine: CheckpointEngine;
  blobs: BlobStore;
}

/**
 * The configured store (SANDCAST_CHECKPOINT_STORE): a directory (default `<dataDir>/checkpoints`),
 * or an S3-compatible bucket `s3://bucket/prefix?endpoint=…&region=…` whose credentials come from
 * the AWS SDK's usual chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, shared config, a role).
 */
export function createCheckpointStorage(config: Pick<ServerConfig, 'checkpointStore'>): CheckpointStorage {
  const blobs = config.checkpointStore.startsWith('s3://')
    ? createS3BlobStore({ url: config.checkpointStore })
    : createFsBlobStore(path.join(config.checkpointStore, 'blobs'));
  return { engine: createCheckpointEngine({ blobs }), blobs };
}
