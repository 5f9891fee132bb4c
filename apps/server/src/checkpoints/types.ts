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
  /**
   * Owner and group ids as the sandbox saw them; a restore gives them back (where the server may
   * chown). Absent in checkpoints recorded before owners were kept: the restoring process owns those.
   */
  uid?: number;
  gid?: number;
  /** Files: byte size and the ordered chunk digests. */
  size?: number;
  chunks?: string[];
  /** Symlinks: the target, stored as written (never followed on the host). */
  target?: string;
  /**
   * What the change scan compares before hashing (host-path sources only): a file whose size,
   * mtime, ctime and inode are all unchanged keeps its chunk list without being read. ctime is
   * what catches a rewrite that kept size and mtime (`touch -d`), since no process can set it.
   * A restore sets a file's mtime back to `mtimeMs`.
   */
  mtimeMs?: number;
  ctimeMs?: number;
  ino?: number;
}

export interface CheckpointManifest {
  version: 1;
  entries: ManifestEntry[];
}

/**
 * Where the workspace bytes come from: a host directory (fast path: a provider's
 * `workspaceHostPath`) or a provider's tar stream (`exportWorkspace`). The host directory itself
 * must not be a symlink; nothing below it is ever followed.
 */
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
  /** Entries left out: fifos, sockets, devices, names that are not UTF-8, paths leaving the root (tar), entries that kept changing while read. */
  skipped: number;
}

/** Content-addressed blobs: the data dir by default, an S3-compatible bucket when servers share Postgres. */
export interface BlobStore {
  has(digest: string): Promise<boolean>;
  /**
   * Stores `data` under `digest` (its sha256 hex) atomically: a reader sees all of it or nothing.
   * `durable` (manifests) also survives a power loss once the promise resolves.
   */
  put(digest: string, data: Buffer, options?: { durable?: boolean }): Promise<void>;
  /** The blob's bytes; a SandcastError `not_found` when it is not there. */
  get(digest: string): Promise<Buffer>;
  /** Removes blobs; a digest that is not there is fine. */
  delete(digests: readonly string[]): Promise<void>;
}

export interface RestoreResult {
  /**
   * A host-dir restore: the manifest with the inodes and times the restored files have now. Pass
   * it as `previous` to the next capture of that directory, so the capture reads only what changed
   * since the restore (the recorded manifest's inodes are those of the captured machine). Null for
   * a tar target: the next capture through `workspaceHostPath` hashes everything once.
   */
  asWritten: CheckpointManifest | null;
}

export interface CheckpointEngine {
  capture(source: WorkspaceSource, previous: CheckpointManifest | null): Promise<CaptureResult>;
  /** Verifies the manifest digest and every chunk's digest before a byte reaches the target. */
  restore(manifest: CheckpointManifest, manifestDigest: string, target: WorkspaceTarget): Promise<RestoreResult>;
  /** Every chunk digest a manifest references (for reference counting). */
  chunksOf(manifest: CheckpointManifest): Set<string>;
  /** The manifest a capture stored under `manifestDigest`, verified and validated. */
  loadManifest(manifestDigest: string): Promise<CheckpointManifest>;
}
