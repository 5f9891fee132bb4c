import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingStore, describeTree } from './checkpoint-fixtures.fixture.ts';
import { ChunkSink } from './chunk-sink.ts';
import { createCheckpointEngine } from './engine.ts';
import { checkpointBlobDir, createFsBlobStore } from './fs-blob-store.ts';
import { scanHostDir } from './host-capture.ts';
import type { BlobStore } from './types.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'sandcast-ckpt-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let counter = 0;
const fresh = async (name: string) => {
  const dir = path.join(scratch, `${name}-${counter++}`);
  await mkdir(dir, { recursive: true });
  return dir;
};
const setup = async (chunkBytes?: number) => {
  const { store, counts } = countingStore(createFsBlobStore(checkpointBlobDir(await fresh('data'))));
  return { blobs: store, counts, engine: createCheckpointEngine({ blobs: store, chunkBytes }) };
};
const hostDir = (dir: string) => ({ kind: 'host-dir' as const, dir });

/** A tree with one of everything a workspace holds. */
async function richTree(dir: string) {
  await mkdir(path.join(dir, 'src/nested/deeper'), { recursive: true });
  await mkdir(path.join(dir, 'empty'));
  await mkdir(path.join(dir, 'locked'));
  await writeFile(path.join(dir, 'src/main.ts'), 'console.log(1);\n');
  await writeFile(path.join(dir, 'src/nested/deeper/data.bin'), randomBytes(10_000));
  await writeFile(path.join(dir, 'empty-file'), '');
  await writeFile(path.join(dir, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  await writeFile(path.join(dir, 'suid'), 'x');
  await chmod(path.join(dir, 'suid'), 0o6755);
  await writeFile(path.join(dir, 'locked/secret'), 'private', { mode: 0o600 });
  await chmod(path.join(dir, 'locked'), 0o500);
  await symlink('src/main.ts', path.join(dir, 'link-relative'));
  await symlink('/etc', path.join(dir, 'link-out'));
  await symlink('does/not/exist', path.join(dir, 'link-dangling'));
}

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
    const expected = (await describeTree(source)).map((line) => line.replace('suid file 6755', 'suid file 755'));
    expect(await describeTree(target)).toEqual(expected);
    // The restored tree as written: the next capture of it against that reads nothing.
    const read: string[] = [];
    const sink = new ChunkSink(createFsBlobStore(await fresh('unused')));
    await scanHostDir(target, { sink, chunkBytes: 1024 * 1024, previous: asWritten, beforeRead: async (p) => void read.push(p) });
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
    await scanHostDir(source, { sink, chunkBytes: 1024 * 1024, previous: second.manifest, beforeRead: async (p) => void read.push(p) });
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
    const expected = (await describeTree(source)).map((line) => line.replace('suid file 6755', 'suid file 755'));
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

describe('hostile trees', () => {
  it('never follows symlinks out or round a loop; skips fifos, sockets and device nodes', async () => {
    const { engine } = await setup();
    const source = await fresh('hostile');
    await symlink('/etc', path.join(source, 'etc'));
    await symlink('/etc/passwd', path.join(source, 'passwd'));
    await symlink('loop-b', path.join(source, 'loop-a'));
    await symlink('loop-a', path.join(source, 'loop-b'));
    await mkdir(path.join(source, 'sub'));
    await symlink('..', path.join(source, 'sub/up'));
    execFileSync('mkfifo', [path.join(source, 'fifo')]);
    execFileSync('mknod', [path.join(source, 'null'), 'c', '1', '3']);
    const socket = createServer();
    await new Promise<void>((resolve) => socket.listen(path.join(source, 'socket'), resolve));
    try {
      const result = await engine.capture(hostDir(source), null);
      expect(result.skipped).toBe(3);
      expect(result.manifest.entries.map((e) => `${e.path}:${e.type}`).sort()).toEqual([
        'etc:symlink',
        'loop-a:symlink',
        'loop-b:symlink',
        'passwd:symlink',
        'sub/up:symlink',
        'sub:dir',
      ]);
      expect(result.totalBytes).toBe(0);
      const target = path.join(await fresh('restored'), 'w');
      await engine.restore(result.manifest, result.manifestDigest, hostDir(target));
      expect(await describeTree(target)).toEqual([
        'etc symlink -> /etc',
        'loop-a symlink -> loop-b',
        'loop-b symlink -> loop-a',
        'passwd symlink -> /etc/passwd',
        'sub dir 755',
        'sub/up symlink -> ..',
      ]);
    } finally {
      socket.close();
    }
  });

  it('refuses a capture root that is a symlink', async () => {
    const { engine } = await setup();
    const link = path.join(await fresh('root-link'), 'workspace');
    await symlink('/etc', link);
    await expect(engine.capture(hostDir(link), null)).rejects.toMatchObject({
      code: 'unprocessable',
      message: expect.stringMatching(/never followed/),
    });
    await expect(engine.capture(hostDir(`${link}-missing`), null)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a file swapped for a symlink (or a fifo) between the scan and the read is never read through', async () => {
    const source = await fresh('swap');
    await writeFile(path.join(source, 'innocent'), 'hello');
    await writeFile(path.join(source, 'pipe'), 'hello');
    const sink = new ChunkSink(createFsBlobStore(await fresh('swap-blobs')));
    const swaps: string[] = [];
    const scan = await scanHostDir(source, {
      sink,
      chunkBytes: 1024 * 1024,
      previous: null,
      beforeRead: async (p) => {
        swaps.push(p);
        await rm(path.join(source, p));
        if (p === 'innocent') await symlink('/etc/passwd', path.join(source, p));
        else execFileSync('mkfifo', [path.join(source, p)]);
      },
    });
    expect(swaps.sort()).toEqual(['innocent', 'pipe']);
    expect(scan.entries.find((e) => e.path === 'innocent')).toEqual({
      path: 'innocent',
      type: 'symlink',
      mode: 0o777,
      target: '/etc/passwd',
    });
    // The fifo was opened without blocking, seen for what it is and skipped.
    expect(scan.entries.some((e) => e.path === 'pipe')).toBe(false);
    expect(scan.skipped).toBe(1);
    expect(sink.totalBytes).toBe(0);
  });

  it('captures and restores 10,000 tiny files', async () => {
    const { engine } = await setup();
    const source = await fresh('tiny');
    for (let d = 0; d < 10; d++) {
      await mkdir(path.join(source, `d${d}`));
      await Promise.all(Array.from({ length: 1000 }, (_, f) => writeFile(path.join(source, `d${d}/${f}`), `${d}/${f}`)));
    }
    const result = await engine.capture(hostDir(source), null);
    expect(result.fileCount).toBe(10_000);
    const target = path.join(await fresh('restored'), 'w');
    await engine.restore(result.manifest, result.manifestDigest, hostDir(target));
    expect((await readdir(path.join(target, 'd9'))).length).toBe(1000);
    expect(await readFile(path.join(target, 'd4/567'), 'utf8')).toBe('4/567');
  }, 60_000);
});

describe('restore refuses what it cannot trust', () => {
  const workspaceWith = async (text: string) => {
    const dir = path.join(await fresh('old'), 'workspace');
    await mkdir(dir);
    await writeFile(path.join(dir, 'notes.txt'), text);
    return dir;
  };

  it('a chunk changed in the blob store: nothing is written, the old workspace stays', async () => {
    const blobDir = checkpointBlobDir(await fresh('data'));
    const engine = createCheckpointEngine({ blobs: createFsBlobStore(blobDir) });
    const source = await fresh('tamper');
    await writeFile(path.join(source, 'a'), 'the real bytes');
    const result = await engine.capture(hostDir(source), null);
    const chunk = result.manifest.entries[0]!.chunks![0]!;
    const file = path.join(blobDir, chunk.slice(0, 2), chunk);
    const bytes = await readFile(file);
    bytes[0]! ^= 1;
    await writeFile(file, bytes);

    const target = await workspaceWith('old work');
    await expect(engine.restore(result.manifest, result.manifestDigest, hostDir(target))).rejects.toMatchObject({
      code: 'unprocessable',
      details: { reason: 'digest_mismatch', chunk },
    });
    expect(await describeTree(path.dirname(target))).toEqual(['workspace dir 755', expect.stringMatching(/^workspace\/notes.txt file/)]);
    expect(await readFile(path.join(target, 'notes.txt'), 'utf8')).toBe('old work');
    let reached = false;
    await expect(
      engine.restore(result.manifest, result.manifestDigest, {
        kind: 'tar',
        write: async () => {
          reached = true;
        },
      }),
    ).rejects.toMatchObject({
      details: { reason: 'digest_mismatch' },
    });
    expect(reached).toBe(false);
  });

  it('a manifest changed after the capture is refused by its digest', async () => {
    const { engine } = await setup();
    const source = await fresh('tamper-manifest');
    await writeFile(path.join(source, 'a'), 'bytes');
    const result = await engine.capture(hostDir(source), null);
    const target = await workspaceWith('old work');
    const forged = { ...result.manifest, entries: result.manifest.entries.map((e) => ({ ...e, mode: 0o777 })) };
    await expect(engine.restore(forged, result.manifestDigest, hostDir(target))).rejects.toMatchObject({
      code: 'unprocessable',
      details: { reason: 'digest_mismatch' },
    });
    expect(await readFile(path.join(target, 'notes.txt'), 'utf8')).toBe('old work');
  });

  it('a crafted manifest (with a matching digest) never writes outside the target', async () => {
    const { engine, blobs } = await setup();
    const payload = Buffer.from('owned');
    const { sha256, manifestBytes } = await import('./manifest.ts');
    await blobs.put(sha256(payload), payload);
    const outside = await fresh('outside');
    const target = await workspaceWith('old work');
    const file = (p: string) => ({ path: p, type: 'file' as const, mode: 0o644, size: payload.length, chunks: [sha256(payload)] });
    const attempts = [
      [file('../escaped')],
      [file(path.join(outside, 'absolute'))],
      [file('a/../../escaped')],
      [file('nul\0byte')],
      [file('')],
      [file('./dot')],
      [{ path: 'out', type: 'symlink' as const, mode: 0o777, target: outside }, file('out/through-link')],
      [file('plain'), file('plain/below-a-file')],
      [file('twice'), file('twice')],
    ];
    for (const entries of attempts) {
      const manifest = { version: 1 as const, entries };
      const digest = sha256(manifestBytes(manifest));
      await expect(
        engine.restore(manifest, digest, hostDir(target)),
        JSON.stringify(entries[entries.length - 1]!.path),
      ).rejects.toMatchObject({
        code: 'unprocessable',
      });
    }
    expect(await readdir(outside)).toEqual([]);
    expect(await readdir(path.dirname(path.dirname(target)))).not.toContain('escaped');
    expect(await readFile(path.join(target, 'notes.txt'), 'utf8')).toBe('old work');
  });
});

describe('restore over a hostile old workspace', () => {
  it('removing the old workspace unlinks its symlinks and never empties what they point to', async () => {
    const { engine } = await setup();
    const source = await fresh('clean');
    await writeFile(path.join(source, 'a'), 'new');
    const result = await engine.capture(hostDir(source), null);
    const outside = await fresh('precious');
    await writeFile(path.join(outside, 'keep'), 'host file');
    const target = path.join(await fresh('old'), 'workspace');
    await mkdir(path.join(target, 'sub'), { recursive: true });
    await symlink(outside, path.join(target, 'sub/link-to-host'));
    await symlink(outside, path.join(target, 'link-to-host'));
    await engine.restore(result.manifest, result.manifestDigest, hostDir(target));
    expect(await describeTree(target)).toEqual([expect.stringMatching(/^a file 644/)]);
    expect(await readFile(path.join(outside, 'keep'), 'utf8')).toBe('host file');
  });

  it('a workspace that is a mount point (cannot be renamed) has its contents replaced', async (ctx) => {
    const { engine } = await setup();
    const source = await fresh('mounted-source');
    await richTree(source);
    const result = await engine.capture(hostDir(source), null);
    const target = path.join(await fresh('mounted'), 'workspace');
    await mkdir(target);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'ckpt-test', target]);
    } catch (error) {
      if (process.env.CI === 'true') throw error;
      ctx.skip(`mounting a tmpfs needs root: ${(error as Error).message}`);
    }
    try {
      await writeFile(path.join(target, 'old'), 'old');
      await engine.restore(result.manifest, result.manifestDigest, hostDir(target));
      const expected = (await describeTree(source)).map((line) => line.replace('suid file 6755', 'suid file 755'));
      expect(await describeTree(target)).toEqual(expected);
      expect(await readdir(path.dirname(target))).toEqual(['workspace']);
    } finally {
      execFileSync('umount', [target]);
    }
  });
});

describe('tar sources and targets', () => {
  const tarOf = (dir: string) => async () => {
    const { spawn } = await import('node:child_process');
    return spawn('tar', ['-C', dir, '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'inherit'] }).stdout;
  };

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
    await engine.restore(fromTar.manifest, fromTar.manifestDigest, {
      kind: 'tar',
      write: async (stream) => {
        const { spawn } = await import('node:child_process');
        const child = spawn('tar', ['-C', target, '-xf', '-'], { stdio: ['pipe', 'inherit', 'inherit'] });
        stream.pipe(child.stdin);
        await new Promise<void>((resolve, reject) =>
          child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar ${code}`)))),
        );
      },
    });
    const expected = (await describeTree(source)).map((line) => line.replace('suid file 6755', 'suid file 755'));
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
  it('refuses a chunk size too small to be useful', () => {
    expect(() => createCheckpointEngine({ blobs: {} as BlobStore, chunkBytes: 10 })).toThrow(/chunkBytes/);
  });
});
