import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import { type ChunkSink, FixedChunker } from './chunk-sink.ts';
import { KEPT_MODE_BITS, unsafePathReason } from './manifest.ts';
import type { ManifestEntry } from './types.ts';

export interface TarScan {
  entries: ManifestEntry[];
  /** Devices, fifos, paths that would leave the workspace, entries below a file or a symlink. */
  skipped: number;
}

/** `./a/b/` → `a/b`; the root itself → ''. */
function normalize(name: string): string {
  let path = name;
  while (path.startsWith('./')) path = path.slice(2);
  while (path.endsWith('/')) path = path.slice(0, -1);
  return path === '.' ? '' : path;
}

/**
 * Reads a provider's tar stream of the workspace: every file is hashed (a tar carries no inode to
 * compare), new chunks are stored. The archive comes from the sandbox, so it is hostile: names
 * that leave the root, devices and fifos are skipped, a later entry replaces an earlier one of the
 * same name (as tar does), hard links copy the chunk list of a file seen before.
 */
/** A header's owner ids when they are real ids (a tar may carry anything there), else none. */
function ownerOf(header: { uid?: number | undefined; gid?: number | undefined }): { uid?: number; gid?: number } {
  const valid = (id: number | undefined): id is number => Number.isInteger(id) && id! >= 0 && id! <= 0xfffffffe;
  return valid(header.uid) && valid(header.gid) ? { uid: header.uid, gid: header.gid } : {};
}

export async function scanTar(stream: Readable, options: { sink: ChunkSink; chunkBytes: number }): Promise<TarScan> {
  const byPath = new Map<string, ManifestEntry>();
  let skipped = 0;
  const extract = tar.extract();
  stream.on('error', (error) => extract.destroy(error));
  stream.pipe(extract);
  try {
    for await (const entry of extract) {
      const { header } = entry;
      const path = normalize(header.name);
      const mode = (header.mode ?? 0o644) & KEPT_MODE_BITS;
      const owner = ownerOf(header);
      const keep = path !== '' && unsafePathReason(path) === null;
      if (keep && (header.type === 'file' || header.type === 'contiguous-file')) {
        const chunker = new FixedChunker(options.sink, options.chunkBytes);
        for await (const data of entry) await chunker.push(data as Buffer);
        const chunks = await chunker.end();
        // Seconds, as tar keeps them; a restore sets them back.
        const mtimeMs = header.mtime instanceof Date && Number.isFinite(header.mtime.getTime()) ? header.mtime.getTime() : undefined;
        byPath.set(path, { path, type: 'file', mode, ...owner, size: chunker.size, chunks, mtimeMs });
        continue;
      }
      entry.resume();
      if (path === '') continue; // the root itself
      if (!keep) skipped++;
      else if (header.type === 'directory') byPath.set(path, { path, type: 'dir', mode, ...owner });
      else if (header.type === 'symlink' && header.linkname && !header.linkname.includes('\0')) {
        byPath.set(path, { path, type: 'symlink', mode: 0o777, ...owner, target: header.linkname });
      } else if (header.type === 'link' && header.linkname) {
        const source = byPath.get(normalize(header.linkname));
        if (source?.type === 'file') byPath.set(path, { ...source, path, mode: source.mode });
        else skipped++;
      } else skipped++;
    }
  } finally {
    // A capture that stops early (a blob store error) must not leave the provider's stream open.
    stream.destroy();
  }
  return { entries: completeTree(byPath, () => skipped++), skipped };
}

/**
 * Adds the directories a tar implies but does not list, and drops what a real tree cannot hold:
 * an entry below a file or a symlink (a restore would have to follow the link to write it).
 */
function completeTree(byPath: Map<string, ManifestEntry>, onDropped: () => void): ManifestEntry[] {
  const entries: ManifestEntry[] = [];
  const implied = new Map<string, ManifestEntry>();
  for (const entry of byPath.values()) {
    const parts = entry.path.split('/');
    let blocked = false;
    for (let i = 1; i < parts.length && !blocked; i++) {
      const parent = parts.slice(0, i).join('/');
      const listed = byPath.get(parent);
      if (listed && listed.type !== 'dir') blocked = true;
      else if (!listed && !implied.has(parent)) implied.set(parent, { path: parent, type: 'dir', mode: 0o755 });
    }
    if (blocked) onDropped();
    else entries.push(entry);
  }
  return [...entries, ...implied.values()];
}
