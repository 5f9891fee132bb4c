import { randomBytes } from 'node:crypto';
import { chmod, chown, lchown, lstat, mkdir, readdir, readFile, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChunkSink } from './chunk-sink.ts';
import { createCheckpointEngine } from './engine.ts';
import { createFsBlobStore } from './fs-blob-store.ts';
import { scanHostDir } from './host-capture.ts';
import { describeTree, filesOpened, hostDir, richTree, useScratch, withoutSetid } from './test-support/trees.ts';
import type { BlobStore } from './types.ts';

const { fresh, setup } = useScratch();

const tarOf = (dir: string) => async () => {
  const { spawn } = await import('node:child_process');
  return spawn('tar', ['-C', dir, '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'inherit'] }).stdout;
};
/** A tar target unpacking into `dir`, as a provider's importWorkspace does (as root: owners kept). */
const untarInto = (dir: string) => async (stream: NodeJS.ReadableStream) => {
  const { spawn } = await import('node:child_process');
  const child = spawn('tar', ['-C', dir, '-xf', '-'], { stdio: ['pipe', 'inherit', 'inherit'] });
  stream.pipe(child.stdin);
  await new Promise<void>((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar ${code}`)))));
};

describe('capture and restore', () => {
  it('round-trips files, modes, empty dirs and empty files, symlinks as written; setuid and setgid are stripped', async () => {
    const { engine } = await setup();
    const source = await fresh('rich');
    await richTree(source);
    const result = await engine.capture(hostDir(source), null);
    expect(result.skipped).toBe(0);
    expect(result.manifest.entries.find((e) => e.path === 'suid')?.mode).toBe(0o755);
    expect(result.manifest.entries.find((e) => e.path === 'link-out')).toMatchObject({ type: 'symlink', target: '/etc' });
    expect(result.fileCount).toBe(6);
    expect(result.changedPaths).toBe(result.manifest.entries.length);

    const target = path.join(await fresh('restored'), 'workspace');
    const { asWritten } = await engine.restore(result.manifest, result.manifestDigest, hostDir(target));
    const expected = withoutSetid(await describeTree(source));
    expect(await describeTree(target)).toEqual(expected);
    // The restored tree as written: the next capture of it against that reads nothing.
    const read: string[] = [];
    const sink = new ChunkSink(createFsBlobStore(await fresh('unused')));
    await scanHostDir(target, { sink, chunkBytes: 1024 * 1024, previous: asWritten, beforeOpen: filesOpened(target, read) });
    expect(read).toEqual([]);
    expect((await engine.capture(hostDir(target), asWritten)).changedPaths).toBe(0);
    // A restore into an existing workspace replaces it, leaving nothing beside it.
    await writeFile(path.join(target, 'stray'), 'gone after the restore');
    await engine.restore(result.manifest, result.manifestDigest, hostDir(target));
    expect(await describeTree(target)).toEqual(expected);
    expect(await readdir(path.dirname(target))).toEqual(['workspace']);
    const mtimes = await Promise.all([target, source].map(async (dir) => (await stat(path.join(dir, 'src/main.ts'))).mtimeMs));
    expect(Math.abs(mtimes[0]! - mtimes[1]!)).toBeLessThan(1);
  });

  it('stores bytes proportional to the change: one file changed in a 64 MB tree of 2,000 files', async () => {
    const { engine, counts } = await setup(1024 * 1024);
    const source = await fresh('large');
    for (let d = 0; d < 20; d++) {
      await mkdir(path.join(source, `d${d}`));
      await Promise.all(Array.from({ length: 100 }, (_, f) => writeFile(path.join(source, `d${d}/f${f}`), randomBytes(32 * 1024))));
    }
    const first = await engine.capture(hostDir(source), null);
    expect(first.fileCount).toBe(2000);
    expect(first.totalBytes).toBe(2000 * 32 * 1024);
    expect(first.storedBytes).toBeGreaterThan(2000 * 32 * 1024);

    const unchanged = await engine.capture(hostDir(source), first.manifest);
    expect(unchanged.changedPaths).toBe(0);
    expect(unchanged.newChunks).toEqual([]);
    expect(unchanged.manifestDigest).toBe(first.manifestDigest);

    await writeFile(path.join(source, 'd7/f42'), randomBytes(32 * 1024));
    const before = { ...counts };
    const second = await engine.capture(hostDir(source), first.manifest);
    expect(second.changedPaths).toBe(1);
    expect(second.newChunks).toHaveLength(1);
    // One chunk and one manifest reached the store: the file's 32 KiB and the manifest's bytes.
    expect(counts.puts - before.puts).toBe(2);
    const manifestBytes = second.storedBytes - 32 * 1024;
    expect(counts.putBytes - before.putBytes).toBe(second.storedBytes);
    expect(manifestBytes).toBeGreaterThan(0);
    // The manifest: a couple of hundred bytes an entry, whatever the files hold.
    expect(manifestBytes).toBeLessThan(256 * second.manifest.entries.length);
    expect(second.totalBytes).toBe(2000 * 32 * 1024);

    // Unchanged files are not even opened.
    const read: string[] = [];
    const sink = new ChunkSink(createFsBlobStore(await fresh('unused')));
    await writeFile(path.join(source, 'd3/f3'), randomBytes(100));
    await scanHostDir(source, { sink, chunkBytes: 1024 * 1024, previous: second.manifest, beforeOpen: filesOpened(source, read) });
    expect(read).toEqual(['d3/f3']);
  }, 60_000);

  it('counts deletions and restores a tree without the deleted paths', async () => {
    const { engine } = await setup();
    const source = await fresh('deletions');
    await richTree(source);
    const first = await engine.capture(hostDir(source), null);
    await rm(path.join(source, 'src'), { recursive: true });
    await rm(path.join(source, 'empty-file'));
    const second = await engine.capture(hostDir(source), first.manifest);
    // src, src/main.ts, src/nested, src/nested/deeper, src/nested/deeper/data.bin, empty-file.
    expect(second.changedPaths).toBe(6);
    const target = path.join(await fresh('restored'), 'w');
    await engine.restore(second.manifest, second.manifestDigest, hostDir(target));
    const expected = withoutSetid(await describeTree(source));
    expect(await describeTree(target)).toEqual(expected);
    // The older checkpoint still restores everything.
    await engine.restore(first.manifest, first.manifestDigest, hostDir(target));
    expect((await readFile(path.join(target, 'src/main.ts'), 'utf8')).length).toBeGreaterThan(0);
  });

  it('catches changes made behind its back: size, mtime, inode, and a same-size same-mtime rewrite (by ctime)', async () => {
    const { engine } = await setup();
    const source = await fresh('background');
    for (const name of ['size', 'mtime', 'inode', 'sneaky']) await writeFile(path.join(source, name), 'aaaa');
    const first = await engine.capture(hostDir(source), null);
    const chunksOf = (m: typeof first.manifest, p: string) => m.entries.find((e) => e.path === p)?.chunks;

    await writeFile(path.join(source, 'size'), 'aaaaa');
    await utimes(path.join(source, 'mtime'), new Date(), new Date(Date.now() + 60_000));
    await writeFile(path.join(source, 'inode.new'), 'bbbb');
    const old = await stat(path.join(source, 'inode'));
    await utimes(path.join(source, 'inode.new'), old.atime, old.mtime);
    await rename(path.join(source, 'inode.new'), path.join(source, 'inode'));
    const sneaky = await stat(path.join(source, 'sneaky'));
    await writeFile(path.join(source, 'sneaky'), 'cccc');
    await utimes(path.join(source, 'sneaky'), sneaky.atime, sneaky.mtime);

    const second = await engine.capture(hostDir(source), first.manifest);
    // The touched file was read again and found the same: a touch alone is not a changed path.
    expect(second.changedPaths).toBe(3);
    expect(second.manifest.entries.find((e) => e.path === 'mtime')?.mtimeMs).not.toBe(
      first.manifest.entries.find((e) => e.path === 'mtime')?.mtimeMs,
    );
    expect(chunksOf(second.manifest, 'size')).not.toEqual(chunksOf(first.manifest, 'size'));
    expect(chunksOf(second.manifest, 'inode')).not.toEqual(chunksOf(first.manifest, 'inode'));
    expect(chunksOf(second.manifest, 'sneaky')).not.toEqual(chunksOf(first.manifest, 'sneaky'));
    const target = path.join(await fresh('restored'), 'w');
    await engine.restore(second.manifest, second.manifestDigest, hostDir(target));
    expect(await readFile(path.join(target, 'sneaky'), 'utf8')).toBe('cccc');
    expect(await readFile(path.join(target, 'inode'), 'utf8')).toBe('bbbb');
  });

  it('chunks a file larger than a chunk and restores it byte for byte', async () => {
    const { engine } = await setup(64 * 1024);
    const source = await fresh('chunks');
    const big = randomBytes(64 * 1024 * 5 + 123);
    await writeFile(path.join(source, 'big'), big);
    await writeFile(path.join(source, 'copy'), big);
    const result = await engine.capture(hostDir(source), null);
    expect(result.manifest.entries.find((e) => e.path === 'big')?.chunks).toHaveLength(6);
    // The copy shares every chunk: stored once.
    expect(result.newChunks).toHaveLength(6);
    expect(engine.chunksOf(result.manifest).size).toBe(6);
    const target = path.join(await fresh('restored'), 'w');
    await engine.restore(result.manifest, result.manifestDigest, hostDir(target));
    expect((await readFile(path.join(target, 'big'))).equals(big)).toBe(true);
    expect(await engine.loadManifest(result.manifestDigest)).toEqual(result.manifest);
  });
});

describe('tar sources and targets', () => {
  it('a tar capture hashes every file into the same chunks as the host capture; a tar restore unpacks to the same tree', async () => {
    const { engine, counts } = await setup();
    const source = await fresh('tar-source');
    await richTree(source);
    await chmod(path.join(source, 'locked'), 0o700);
    const fromHost = await engine.capture(hostDir(source), null);
    const putsAfterHost = counts.puts;
    const fromTar = await engine.capture({ kind: 'tar', open: tarOf(source) }, null);
    const files = (m: typeof fromHost.manifest) =>
      m.entries.map(({ path: p, type, mode, size, chunks, target }) => ({ p, type, mode, size, chunks, target }));
    expect(files(fromTar.manifest)).toEqual(files(fromHost.manifest));
    // Every chunk was already stored: only the tar manifest is new; the files kept their mtimes (to the second).
    expect(fromTar.newChunks).toEqual([]);
    expect(counts.puts - putsAfterHost).toBe(1);
    const main = (m: typeof fromHost.manifest) => m.entries.find((e) => e.path === 'src/main.ts')!.mtimeMs!;
    expect(main(fromTar.manifest)).toBe(Math.floor(main(fromHost.manifest) / 1000) * 1000);
    expect((await engine.capture({ kind: 'tar', open: tarOf(source) }, fromHost.manifest)).changedPaths).toBe(0);

    const target = await fresh('tar-target');
    await engine.restore(fromTar.manifest, fromTar.manifestDigest, { kind: 'tar', write: untarInto(target) });
    const expected = withoutSetid(await describeTree(source));
    expect(await describeTree(target)).toEqual(expected);
  });

  it('a hostile tar: paths leaving the root, devices, entries below a symlink are skipped; hard links keep their bytes', async () => {
    const { engine } = await setup();
    const tar = (await import('tar-stream')).default;
    const pack = tar.pack();
    pack.entry({ name: '../escape', type: 'file' }, 'x');
    pack.entry({ name: '/etc/absolute', type: 'file' }, 'x');
    pack.entry({ name: 'dev', type: 'character-device', devmajor: 1, devminor: 3 });
    pack.entry({ name: 'pipe', type: 'fifo' });
    pack.entry({ name: 'out', type: 'symlink', linkname: '/etc' });
    pack.entry({ name: 'out/passwd', type: 'file' }, 'x');
    pack.entry({ name: 'deep/inside/file', type: 'file', mode: 0o4755 }, 'real');
    pack.entry({ name: 'hard', type: 'link', linkname: 'deep/inside/file' });
    pack.finalize();
    const result = await engine.capture({ kind: 'tar', open: async () => pack as unknown as import('node:stream').Readable }, null);
    expect(result.skipped).toBe(5);
    expect(result.manifest.entries.map((e) => `${e.path}:${e.type}:${e.mode.toString(8)}`)).toEqual([
      'deep:dir:755',
      'deep/inside:dir:755',
      'deep/inside/file:file:755',
      'hard:file:755',
      'out:symlink:777',
    ]);
    const target = path.join(await fresh('restored'), 'w');
    await engine.restore(result.manifest, result.manifestDigest, hostDir(target));
    expect(await readFile(path.join(target, 'hard'), 'utf8')).toBe('real');
  });
});

describe('engine options', () => {
  it('keeps owners: files, dirs and symlinks come back with the uid and gid they had, on a host dir and through tar', async (ctx) => {
    if (process.getuid?.() !== 0) {
      if (process.env.CI === 'true') throw new Error('CI=true but giving files away needs root');
      ctx.skip('giving files away needs root');
    }
    const { engine } = await setup();
    const source = await fresh('owners');
    await mkdir(path.join(source, 'home'));
    await writeFile(path.join(source, 'home/notes'), 'mine');
    await symlink('notes', path.join(source, 'home/link'));
    await writeFile(path.join(source, 'rootfile'), 'root');
    await chown(path.join(source, 'home'), 1000, 1001);
    await chown(path.join(source, 'home/notes'), 1000, 1001);
    await lchown(path.join(source, 'home/link'), 1002, 1003);
    const owners = async (dir: string) =>
      Promise.all(
        ['home', 'home/notes', 'home/link', 'rootfile'].map(async (p) => lstat(path.join(dir, p)).then((s) => `${p} ${s.uid}:${s.gid}`)),
      );
    const result = await engine.capture(hostDir(source), null);
    expect(result.manifest.entries.find((e) => e.path === 'home/notes')).toMatchObject({ uid: 1000, gid: 1001 });

    // The workspace root keeps its own owner; everything below gets the recorded one.
    const target = path.join(await fresh('owners-restored'), 'workspace');
    await mkdir(target);
    await chown(target, 1000, 1000);
    await engine.restore(result.manifest, result.manifestDigest, hostDir(target));
    expect(await owners(target)).toEqual(await owners(source));
    expect((await stat(target)).uid).toBe(1000);

    // A chown is a change the next capture sees (ctime moves), and the new owner is recorded.
    await chown(path.join(source, 'rootfile'), 1005, 1005);
    const next = await engine.capture(hostDir(source), result.manifest);
    expect(next.changedPaths).toBe(1);
    expect(next.manifest.entries.find((e) => e.path === 'rootfile')).toMatchObject({ uid: 1005, gid: 1005 });

    const fromTar = await engine.capture({ kind: 'tar', open: tarOf(source) }, null);
    expect(fromTar.manifest.entries.find((e) => e.path === 'home/link')).toMatchObject({ uid: 1002, gid: 1003 });
    const untarred = await fresh('owners-untarred');
    await engine.restore(fromTar.manifest, fromTar.manifestDigest, { kind: 'tar', write: untarInto(untarred) });
    expect(await owners(untarred)).toEqual(await owners(source));
  });

  it('refuses a chunk size too small to be useful', () => {
    expect(() => createCheckpointEngine({ blobs: {} as BlobStore, chunkBytes: 10 })).toThrow(/chunkBytes/);
  });
});
