import { spawn } from 'node:child_process';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { removeTree } from './fs-util.ts';

type PaxHeaders = tar.Header;
const paxOf = (header: PaxHeaders) => (header.pax ?? undefined) as Record<string, string> | undefined;

const TAR_READ = ['--numeric-owner', '--xattrs', '--xattrs-include=trusted.overlay.opaque', '-cf', '-', '.'];

/** Entries of a layer with what overlay semantics need: whiteouts, opaque dirs, types. */
async function scanLayer(dir: string): Promise<Array<{ path: string; kind: 'whiteout' | 'opaque' | 'directory' | 'other' }>> {
  const child = spawn('tar', ['-C', dir, ...TAR_READ], { stdio: ['ignore', 'pipe', 'ignore'] });
  const extract = tar.extract();
  const found: Array<{ path: string; kind: 'whiteout' | 'opaque' | 'directory' | 'other' }> = [];
  extract.on('entry', (header: PaxHeaders, stream, next) => {
    const path = header.name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (path) {
      if (header.type === 'character-device' && !header.devmajor && !header.devminor) found.push({ path, kind: 'whiteout' });
      else if (header.type === 'directory')
        found.push({ path, kind: paxOf(header)?.['SCHILY.xattr.trusted.overlay.opaque'] === 'y' ? 'opaque' : 'directory' });
      else found.push({ path, kind: 'other' });
    }
    stream.on('end', () => next());
    stream.resume();
  });
  await pipeline(child.stdout, extract);
  return found;
}

/**
 * Merges layers (bottom first) into one directory that is still an overlay layer: what a higher
 * layer deletes or makes opaque is removed from the merge, and its whiteouts and opaque marks are
 * kept so they still hide the layers below the squashed range. Used when an image's chain grows
 * past the configured depth; its cost follows the squashed content, unlike a capture.
 */
export async function squashLayers(layerDirs: string[], dest: string): Promise<void> {
  for (const layer of layerDirs) {
    for (const entry of await scanLayer(layer)) {
      const target = join(dest, entry.path);
      const existing = await lstat(target).catch(() => null);
      if (!existing) continue;
      const replace =
        entry.kind === 'whiteout' ||
        entry.kind === 'opaque' ||
        (entry.kind === 'directory' && !existing.isDirectory()) ||
        (entry.kind === 'other' && existing.isDirectory());
      if (replace) await removeTree(target);
    }
    const reader = spawn('tar', ['-C', layer, ...TAR_READ], { stdio: ['ignore', 'pipe', 'ignore'] });
    const writer = spawn('tar', ['-C', dest, '--numeric-owner', '--xattrs', '--xattrs-include=trusted.*', '-xpf', '-'], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    writer.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const done = new Promise<number | null>((resolve) => writer.on('close', resolve));
    await pipeline(reader.stdout, writer.stdin);
    const code = await done;
    if (code !== 0) throw new Error(`squashing layers failed: ${stderr.trim().slice(-500)}`);
  }
}
