import type { Readable } from 'node:stream';

/**
 * The shape of a checkpoint: a manifest of every path in the workspace with the chunks its bytes
 * are made of. Chunks are content-addressed (sha256 hex of their bytes) and stored once, so a
 * checkpoint costs what changed since the last one, not the workspace size.
 */
export interface ManifestEntry {
  /** Relative to the workspace root, `/`-separated, never `..`, never absolute. */
  path: string;
  type: 'file' | 'dir' | 'symlink';
  /** Permission bits (`mode & 0o7777`, setuid/setgid stripped on restore). */
  mode: number;
  /** Files: byte size and the ordered chunk digests. */
  size?: number;
  chunks?: string[];
  /** Symlinks: the target, stored as written (never followed on the host). */
  target?: string;
  /** What the change scan compares before hashing (host-path sources only). */
  mtimeMs?: number;
  ino?: number;
}

export interface CheckpointManifest {
  version: 1;
  entries: ManifestEntry[];
}

/** Where the workspace bytes come from: a host directory (fast path) or a provider's tar stream. */
export type WorkspaceSource = { kind: 'host-dir'; dir: string } | { kind: 'tar'; open: () => Promise<Readable> };

/** Where a restore writes: a host directory, or a provider's importWorkspace (tar stream). */
export type WorkspaceTarget = { kind: 'host-dir'; dir: string } | { kind: 'tar'; write: (tar: Readable) => Promise<void> };

export interface CaptureResult {
  manifest: CheckpointManifest;
  /** sha256 hex of the canonical manifest JSON; a restore verifies it. */
  manifestDigest: string;
  /** Digests of the chunks this capture stored for the first time. */
  newChunks: string[];
  /** Bytes written to the blob store by this capture (new chunks plus the manifest). */
  storedBytes: number;
  /** Bytes of every file in the workspace. */
  totalBytes: number;
  fileCount: number;
  /** Paths added, changed or deleted against `previous`. */
  changedPaths: number;
}

/** Content-addressed blobs: the data dir by default, an S3-compatible bucket when servers share Postgres. */
export interface BlobStore {
  has(digest: string): Promise<boolean>;
  put(digest: string, data: Buffer): Promise<void>;
  get(digest: string): Promise<Buffer>;
  delete(digests: readonly string[]): Promise<void>;
}

export interface CheckpointEngine {
  capture(source: WorkspaceSource, previous: CheckpointManifest | null): Promise<CaptureResult>;
  /** Verifies the manifest digest and every chunk's digest before a byte reaches the target. */
  restore(manifest: CheckpointManifest, manifestDigest: string, target: WorkspaceTarget): Promise<void>;
  /** Every chunk digest a manifest references (for reference counting). */
  chunksOf(manifest: CheckpointManifest): Set<string>;
}
