import { createHash } from 'node:crypto';
import { canonicalJson, SandcastError } from '@sandcast/core';
import type { CheckpointManifest, ManifestEntry } from './types.ts';

/** Chunks are cut at fixed offsets of this size (decision 0022). */
export const DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024;

/** Permission bits a checkpoint keeps: setuid and setgid never survive a capture or a restore. */
export const KEPT_MODE_BITS = 0o1777;

/** The largest uid or gid: (uid_t)-1 means "no change" to chown, so it is never an owner. */
const MAX_ID = 0xfffffffe;

const DIGEST = /^[0-9a-f]{64}$/;

export const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

export const isDigest = (value: string): boolean => DIGEST.test(value);

/** Code-unit order, the same on every machine (no locale). */
const byPath = (a: ManifestEntry, b: ManifestEntry) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** The manifest's one byte form: entries sorted by path, keys sorted, absent fields left out. */
export function manifestBytes(manifest: CheckpointManifest): Buffer {
  return Buffer.from(canonicalJson({ version: manifest.version, entries: [...manifest.entries].sort(byPath) }), 'utf8');
}

export function sortEntries(entries: ManifestEntry[]): ManifestEntry[] {
  return entries.sort(byPath);
}

/** Every chunk digest a manifest references. */
export function chunksOf(manifest: CheckpointManifest): Set<string> {
  const chunks = new Set<string>();
  for (const entry of manifest.entries) for (const chunk of entry.chunks ?? []) chunks.add(chunk);
  return chunks;
}

/** A checkpoint that cannot be restored as recorded: a bad manifest, a corrupt chunk. */
export const refuse = (message: string, details: Record<string, unknown>) =>
  new SandcastError('unprocessable', `${message}; the checkpoint cannot be restored — restore an older one`, details);

/**
 * Why a manifest path could leave the directory it is restored into, or null when it cannot:
 * empty, NUL, absolute, `.`/`..` or empty components are all refused.
 */
export function unsafePathReason(path: string): string | null {
  if (typeof path !== 'string' || path.length === 0) return 'an empty path';
  if (path.includes('\0')) return 'a NUL byte';
  if (path.startsWith('/')) return 'an absolute path';
  for (const part of path.split('/')) {
    if (part === '' || part === '.' || part === '..') return `a "${part}" component`;
  }
  return null;
}

/**
 * Checks a manifest before anything is written from it: the version, every path (relative, no
 * `..`, no NUL, no duplicate), every entry's shape and chunk digests, and that no entry sits below
 * a file or a symlink of the same manifest (which a restore would otherwise follow).
 */
export function validateManifest(manifest: CheckpointManifest): void {
  if (manifest?.version !== 1 || !Array.isArray(manifest.entries)) {
    throw refuse('the checkpoint manifest is not version 1', { reason: 'manifest_version' });
  }
  const types = new Map<string, ManifestEntry['type']>();
  for (const entry of manifest.entries) {
    const reason = unsafePathReason(entry.path);
    if (reason) throw refuse(`the checkpoint entry ${JSON.stringify(entry.path)} has ${reason}`, { reason: 'unsafe_path' });
    if (types.has(entry.path)) throw refuse(`the checkpoint lists ${JSON.stringify(entry.path)} twice`, { reason: 'duplicate_path' });
    if (!Number.isInteger(entry.mode) || entry.mode < 0 || entry.mode > 0o7777) {
      throw refuse(`the checkpoint entry ${JSON.stringify(entry.path)} has a bad mode`, { reason: 'bad_entry' });
    }
    for (const id of [entry.uid, entry.gid]) {
      if (id !== undefined && !(Number.isInteger(id) && id >= 0 && id <= MAX_ID)) {
        throw refuse(`the checkpoint entry ${JSON.stringify(entry.path)} has a bad owner id`, { reason: 'bad_entry' });
      }
    }
    if (entry.type === 'file') {
      const chunks = entry.chunks;
      if (!Array.isArray(chunks) || !chunks.every((c) => typeof c === 'string' && isDigest(c)) || !Number.isSafeInteger(entry.size)) {
        throw refuse(`the checkpoint file ${JSON.stringify(entry.path)} has no valid chunk list`, { reason: 'bad_entry' });
      }
    } else if (entry.type === 'symlink') {
      if (typeof entry.target !== 'string' || entry.target.length === 0 || entry.target.includes('\0')) {
        throw refuse(`the checkpoint symlink ${JSON.stringify(entry.path)} has no valid target`, { reason: 'bad_entry' });
      }
    } else if (entry.type !== 'dir') {
      throw refuse(`the checkpoint entry ${JSON.stringify(entry.path)} has an unknown type`, { reason: 'bad_entry' });
    }
    types.set(entry.path, entry.type);
  }
  for (const path of types.keys()) {
    for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1)) {
      const parent = types.get(path.slice(0, at));
      if (parent !== undefined && parent !== 'dir') {
        throw refuse(`the checkpoint entry ${JSON.stringify(path)} lies below a ${parent}`, { reason: 'unsafe_path' });
      }
    }
  }
}

/** Refuses a manifest whose canonical bytes do not hash to the digest it was recorded with. */
export function verifyManifestDigest(manifest: CheckpointManifest, manifestDigest: string): void {
  if (sha256(manifestBytes(manifest)) !== manifestDigest) {
    throw refuse('the checkpoint manifest does not match its digest (it was changed after the capture)', { reason: 'digest_mismatch' });
  }
}

/** Refuses a chunk whose bytes do not hash to its name. */
export function verifyChunk(digest: string, data: Buffer): Buffer {
  if (sha256(data) !== digest) {
    throw refuse(`checkpoint chunk ${digest} is corrupt in the blob store`, { reason: 'digest_mismatch', chunk: digest });
  }
  return data;
}

/** Reads and checks a stored manifest by its digest. */
export function parseManifest(data: Buffer, manifestDigest: string): CheckpointManifest {
  verifyChunk(manifestDigest, data);
  const manifest = JSON.parse(data.toString('utf8')) as CheckpointManifest;
  validateManifest(manifest);
  return manifest;
}
