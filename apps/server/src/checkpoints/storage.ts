import type { ServerConfig } from '../config.ts';
import type { BlobStore, CheckpointEngine } from './types.ts';

/** The checkpoint engine and the blob store it writes to. */
export interface CheckpointStorage {
  engine: CheckpointEngine;
  blobs: BlobStore;
}

/** The configured store: the data dir's `checkpoints` directory, or an S3-compatible bucket. */
export function createCheckpointStorage(_config: Pick<ServerConfig, 'checkpointStore'>): CheckpointStorage {
  throw new Error('pending the engine');
}
