import { constants } from 'node:fs';
import { chmod, lchown, link, lstat, lutimes, mkdir, open, readdir, rm, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { localError } from './errors.ts';

/** What an extraction did besides writing entries: what it left out, and whose bits it cleared. */
export interface ExtractStats {
  entries: number;
  /** Device nodes and FIFOs: never created (a device node in an image is a door to the host's devices). */
  skippedSpecial: number;
  /** Entries whose setuid/setgid bits were cleared. */
  strippedModes: number;
}

export interface ExtractOptions {
  /** An existing directory this process alone writes to (a fresh staging directory). */
  root: string;
  /** What is extracted, for messages: "the archive", "layer l1/layer.tar". */
  what: string;
  /** Docker layer semantics: `.wh.<name>` deletes `<name>`, `.wh..wh..opq` empties its directory of lower layers' files. */
  layer: boolean;
  /** Default MAX_ENTRIES. */
  maxEntries?: number | undefined;
}

type Header = tar.Header;
/** An entry's body as tar-stream hands it over. */
type Body = AsyncIterable<Uint8Array>;

const WRITE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const OPEN_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/**
 * Entries one tar may hold. A full Debian image has about 100,000; a tar of empty entries costs
 * 512 bytes each, so the byte cap alone would still allow millions of inodes and path strings.
 */
const MAX_ENTRIES = 1_000_000;
/** Permission bits kept: everything but setuid and setgid (the sticky bit of /tmp stays). */
const MODE_KEPT = 0o1777;

/** Owners are restored only as root (the provider runs as root; unit tests need not). */
const RESTORE_OWNERS = process.getuid?.() === 0;

const printable = (value: string) => JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value);

/**
 * Splits an archive path into components inside the root: `./` prefixes and empty or `.`
 * components are dropped; NUL bytes, absolute paths and `..` are refused, never rewritten.
 */
export function archivePathParts(raw: unknown, describe: string): string[] {
  if (typeof raw !== 'string') throw localError('invalid_input', `${describe} is not a string`);
  if (raw.includes('\0')) throw localError('invalid_input', `${describe} ${printable(raw)} has a NUL byte`);
  if (raw.startsWith('/')) {
    throw localError('invalid_input', `${describe} ${printable(raw)} is an absolute path; paths in an image archive must stay inside it`);
  }
  const parts = raw.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) {
    throw localError('invalid_input', `${describe} ${printable(raw)} climbs out with ".."; paths in an image archive must stay inside it`);
  }
  return parts;
}

/**
 * Extracts a tar stream into `root` without ever following a symlink: every parent directory is
 * checked with lstat (one that is a symlink — made by an earlier entry or layer — refuses the
 * archive), files are created with O_EXCL|O_NOFOLLOW after the old entry is unlinked, hard links
 * must name a regular file already inside the root, device nodes and FIFOs are left out, and
 * setuid/setgid bits are cleared. Nothing else writes to `root` while this runs (a staging
 * directory of the image store), so a check and the write after it see the same tree.
 */
export async function extractTar(source: Readable, options: ExtractOptions): Promise<ExtractStats> {
  const run = new Extraction(options);
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    run.apply(header, stream as unknown as Body).then(
      () => next(),
      (error: unknown) => {
        stream.resume();
        next(error as Error);
      },
    );
  });
  try {
    await chmod(options.root, 0o755);
    await pipeline(source, extract);
  } catch (error) {
    throw asImportError(error, options.what);
  }
  return run.stats;
}

/** Errors of tar parsing and of the file system in words that say what was wrong with the archive. */
function asImportError(error: unknown, what: string): unknown {
  if (error && typeof error === 'object' && 'provider' in error) return error;
  const err = error as NodeJS.ErrnoException;
  switch (err?.code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return localError('backend', `the server's disk is full while unpacking ${what}; free space and try again`, error);
    case 'ENAMETOOLONG':
      return localError('invalid_input', `${what} has a path too long for the file system`, error);
    case undefined:
      return localError('invalid_input', `${what} is not a tar archive (or is damaged): ${err?.message ?? String(error)}`, error);
    default:
      return localError('backend', `unpacking ${what} failed: ${err.message}`, error);
  }
}

class Extraction {
  readonly stats: ExtractStats = { entries: 0, skippedSpecial: 0, strippedModes: 0 };
  /** Relative paths known to be real directories (not symlinks); cleared whenever something is removed. */
  private readonly dirs = new Set<string>();
  /** Paths this layer unpacked (and their parents), which an opaque marker of the same layer keeps. */
  private readonly unpacked = new Set<string>();

  constructor(private readonly options: ExtractOptions) {}

  private refuse(message: string): never {
    throw localError('invalid_input', `${this.options.what}: ${message}`);
  }

  async apply(header: Header, stream: Body): Promise<void> {
    // Only a file's body is read; every other entry's is drained at once, before any await.
    const isFile = header.type === 'file' || header.type === 'contiguous-file';
    const drained = isFile ? null : drain(stream);
    try {
      await this.applyEntry(header, stream);
    } finally {
      await drained;
    }
  }

  private async applyEntry(header: Header, stream: Body): Promise<void> {
    const parts = archivePathParts(header.name, `${this.options.what}: the entry`);
    const name = parts.join('/');
    if (header.linkname?.includes('\0')) this.refuse(`the link target of ${printable(name)} has a NUL byte`);
    const maxEntries = this.options.maxEntries ?? MAX_ENTRIES;
    if (++this.stats.entries > maxEntries) {
      throw localError(
        'too_large',
        `${this.options.what} has more than ${maxEntries.toLocaleString('en')} entries; split the image or slim it down`,
      );
    }
    const base = parts.at(-1);
    if (base === undefined) {
      if (header.type === 'directory') await this.setDirMeta(this.options.root, header);
      return;
    }
    if (this.options.layer) {
      if (base === '.wh..wh..opq') {
        await this.opaque(parts.slice(0, -1));
        return;
      }
      if (base.startsWith('.wh.')) {
        await this.whiteout([...parts.slice(0, -1), base.slice(4)]);
        return;
      }
      for (let i = 1; i <= parts.length; i++) this.unpacked.add(parts.slice(0, i).join('/'));
    }
    switch (header.type) {
      case 'directory':
        return this.directory(parts, header);
      case 'file':
      case 'contiguous-file':
        return this.file(parts, header, stream);
      case 'symlink':
        return this.symlink(parts, header);
      case 'link':
        return this.hardLink(parts, header);
      case 'character-device':
      case 'block-device':
      case 'fifo':
        this.stats.skippedSpecial++;
        return;
      default:
        this.refuse(`the entry ${printable(name)} has a tar type this import does not support (${String(header.type)})`);
    }
  }

  /**
   * The path of `parts` inside the root, its parent directories created where missing (`create`)
   * or else required to exist (null when one does not); never passes through anything but a real
   * directory.
   */
  private async pathOf(parts: string[], create: boolean): Promise<string | null> {
    let dir = this.options.root;
    for (const [i, part] of parts.entries()) {
      if (i === parts.length - 1) return join(dir, part);
      const rel = parts.slice(0, i + 1).join('/');
      dir = join(dir, part);
      if (this.dirs.has(rel)) continue;
      const stat = await lstat(dir).catch(() => null);
      if (!stat) {
        if (!create) return null;
        await mkdir(dir);
        await chmod(dir, 0o755);
      } else if (stat.isSymbolicLink()) {
        this.refuse(
          `${printable(parts.join('/'))} would be written through the symlink /${rel} (made by an earlier entry or layer); ` +
            'an image archive may not write through symlinks',
        );
      } else if (!stat.isDirectory()) {
        this.refuse(`${printable(parts.join('/'))} needs /${rel} to be a directory, but the archive made it a file`);
      }
      this.dirs.add(rel);
    }
    return dir;
  }

  /** Where an entry goes: its parents exist (created if needed) and none is a symlink. */
  private async placeOf(parts: string[]): Promise<string> {
    const path = await this.pathOf(parts, true);
    if (path === null) this.refuse(`no place for ${printable(parts.join('/'))}`);
    return path;
  }

  /** Removes whatever is at `path` (a symlink itself, never its target). */
  private async clear(path: string): Promise<void> {
    const stat = await lstat(path).catch(() => null);
    if (!stat) return;
    if (stat.isDirectory()) {
      await rm(path, { recursive: true, force: true });
      this.dirs.clear();
    } else await unlink(path);
  }

  private mode(header: Header, fallback: number): number {
    const mode = header.mode ?? fallback;
    if (mode & 0o6000) this.stats.strippedModes++;
    return mode & MODE_KEPT;
  }

  private async setDirMeta(path: string, header: Header): Promise<void> {
    const handle = await open(path, OPEN_DIR);
    try {
      if (RESTORE_OWNERS) await handle.chown(header.uid ?? 0, header.gid ?? 0);
      await handle.chmod(this.mode(header, 0o755));
    } finally {
      await handle.close();
    }
  }

  private async directory(parts: string[], header: Header): Promise<void> {
    const path = await this.placeOf(parts);
    const stat = await lstat(path).catch(() => null);
    if (stat && !stat.isDirectory()) await this.clear(path);
    if (!stat?.isDirectory()) await mkdir(path);
    await this.setDirMeta(path, header);
    this.dirs.add(parts.join('/'));
  }

  private async file(parts: string[], header: Header, stream: Body): Promise<void> {
    const path = await this.placeOf(parts);
    await this.clear(path);
    const handle = await open(path, WRITE_NEW, 0o600);
    try {
      for await (const chunk of stream) {
        for (let offset = 0; offset < chunk.length; ) offset += (await handle.write(chunk, offset)).bytesWritten;
      }
      if (RESTORE_OWNERS) await handle.chown(header.uid ?? 0, header.gid ?? 0);
      await handle.chmod(this.mode(header, 0o644));
      if (header.mtime) await handle.utimes(header.mtime, header.mtime);
    } finally {
      await handle.close();
    }
  }

  private async symlink(parts: string[], header: Header): Promise<void> {
    if (!header.linkname) this.refuse(`the symlink ${printable(parts.join('/'))} has no target`);
    const path = await this.placeOf(parts);
    await this.clear(path);
    // The target is text the sandbox resolves inside its own root; nothing here ever follows it.
    await symlink(header.linkname, path);
    if (RESTORE_OWNERS) await lchown(path, header.uid ?? 0, header.gid ?? 0);
    if (header.mtime) await lutimes(path, header.mtime, header.mtime);
  }

  private async hardLink(parts: string[], header: Header): Promise<void> {
    const name = printable(parts.join('/'));
    let targetParts: string[];
    try {
      targetParts = archivePathParts(header.linkname ?? '', 'target');
    } catch (error) {
      this.refuse(`the hard link ${name} points outside the image: ${(error as Error).message}`);
    }
    if (targetParts.length === 0) this.refuse(`the hard link ${name} has no target`);
    const target = await this.pathOf(targetParts, false).catch(() => null);
    const targetStat = target ? await lstat(target).catch(() => null) : null;
    if (!target || !targetStat?.isFile()) {
      this.refuse(`the hard link ${name} must name a regular file earlier in the image; ${printable(targetParts.join('/'))} is not one`);
    }
    const path = await this.placeOf(parts);
    if (path === target) return;
    await this.clear(path);
    await link(target, path);
  }

  /** `.wh.<name>`: the lower layers' `<name>` is deleted. */
  private async whiteout(parts: string[]): Promise<void> {
    const path = await this.pathOf(parts, false);
    if (path) await this.clear(path);
  }

  /** `.wh..wh..opq`: the directory keeps only what this layer unpacked into it (Docker's rule). */
  private async opaque(dirParts: string[]): Promise<void> {
    let dir = this.options.root;
    if (dirParts.length > 0) {
      const path = await this.pathOf(dirParts, false);
      if (!path) return;
      dir = path;
      const stat = await lstat(dir).catch(() => null);
      if (!stat?.isDirectory()) return;
    }
    const prune = async (path: string, rel: string): Promise<void> => {
      for (const child of await readdir(path)) {
        const childRel = rel ? `${rel}/${child}` : child;
        const childPath = join(path, child);
        if (!this.unpacked.has(childRel)) await this.clear(childPath);
        else if ((await lstat(childPath)).isDirectory()) await prune(childPath, childRel);
      }
    };
    await prune(dir, dirParts.join('/'));
  }
}

async function drain(stream: Body): Promise<void> {
  for await (const _chunk of stream) {
    // discarded: the entry has no content this import keeps
  }
}
