import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChunkSink } from './chunk-sink.ts';
import { createCheckpointEngine } from './engine.ts';
import { checkpointBlobDir, createFsBlobStore } from './fs-blob-store.ts';
import { scanHostDir } from './host-capture.ts';
import { describeTree, hostDir, richTree, useScratch, withoutSetid } from './test-support/trees.ts';

const { fresh, setup } = useScratch();

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
      beforeOpen: async (p) => {
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
      uid: process.getuid?.(),
      gid: process.getgid?.(),
      target: '/etc/passwd',
    });
    // The fifo was opened without blocking, seen for what it is and skipped.
    expect(scan.entries.some((e) => e.path === 'pipe')).toBe(false);
    expect(scan.skipped).toBe(1);
    expect(sink.totalBytes).toBe(0);
  });

  it('a directory swapped for a symlink before it is opened, or while it is walked, never leads out', async () => {
    const source = await fresh('swap-dir');
    const outside = await fresh('outside');
    await writeFile(path.join(outside, 'host-secret'), 'host bytes');
    await mkdir(path.join(source, 'early'));
    await mkdir(path.join(source, 'late'));
    await writeFile(path.join(source, 'late/first'), 'inside');
    await writeFile(path.join(source, 'late/second'), 'inside');
    const swap = async (p: string) => {
      await rename(path.join(source, p), path.join(source, `${p}-moved`));
      await symlink(outside, path.join(source, p));
    };
    const sink = new ChunkSink(createFsBlobStore(await fresh('swap-dir-blobs')));
    const scan = await scanHostDir(source, {
      sink,
      chunkBytes: 1024 * 1024,
      previous: null,
      beforeOpen: async (p) => {
        // Between the lstat that saw a directory and its open.
        if (p === 'early') await swap('early');
        // While `late` is open and being walked: the walk keeps its descriptor.
        if (p === 'late/first') await swap('late');
      },
    });
    const paths = scan.entries.map((e) => `${e.path}:${e.type}`);
    expect(paths).toContain('early:symlink');
    expect(paths.some((p) => p.includes('host-secret'))).toBe(false);
    expect(scan.entries.filter((e) => e.type === 'file').every((e) => e.size === 'inside'.length)).toBe(true);
    expect(await readFile(path.join(outside, 'host-secret'), 'utf8')).toBe('host bytes');
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
      // Owner ids that are not ids: negative, fractional, (uid_t)-1 (chown's "leave it"), beyond 32 bits, not a number.
      ...[-1, 1.5, 0xffffffff, 2 ** 40, '0'].map((uid) => [{ ...file(`owner-${String(uid)}`), uid: uid as number, gid: 0 }]),
      [{ ...file('group-nan'), uid: 0, gid: Number.NaN }],
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
      const expected = withoutSetid(await describeTree(source));
      expect(await describeTree(target)).toEqual(expected);
      expect(await readdir(path.dirname(target))).toEqual(['workspace']);
    } finally {
      execFileSync('umount', [target]);
    }
  });
});
