import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { charged, ImportBudget } from './archive-stream.ts';
import { archivePathParts, extractTar } from './safe-extract.ts';

type Entry = Parameters<tar.Pack['entry']>[0] & { body?: string };

/** A tar stream of these entries, produced as it is read. */
function tarOf(entries: Entry[]): Readable {
  const pack = tar.pack();
  void (async () => {
    for (const { body, ...header } of entries) {
      await new Promise<void>((resolve, reject) => {
        const done = (error?: Error | null) => (error ? reject(error) : resolve());
        if (header.type === undefined || header.type === 'file') pack.entry({ mode: 0o644, ...header }, body ?? '', done);
        else pack.entry(header, done);
      });
    }
    pack.finalize();
  })();
  return pack as unknown as Readable;
}

describe('extractTar: a hostile tar never reaches outside its root', () => {
  let work: string;
  let root: string;
  let outside: string;
  beforeEach(async () => {
    work = await mkdtemp(join(tmpdir(), 'sandcast-extract-'));
    root = join(work, 'root');
    outside = join(work, 'outside');
    await mkdir(root);
    await mkdir(outside);
    await writeFile(join(outside, 'victim'), 'host\n');
  });
  afterEach(async () => {
    await rm(work, { recursive: true, force: true });
  });

  const extract = (entries: Entry[], layer = false) => extractTar(tarOf(entries), { root, what: 'the test archive', layer });

  it('refuses to write through a symlink an earlier entry made, absolute or relative', async () => {
    for (const linkname of [outside, '../outside', '../../..'.concat(outside)]) {
      await rm(root, { recursive: true, force: true });
      await mkdir(root);
      await expect(
        extract([
          { name: 'x', type: 'symlink', linkname },
          { name: 'x/pwned', body: 'pwned' },
        ]),
      ).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('through the symlink /x') });
    }
    expect(await readdir(outside)).toEqual(['victim']);
  });

  it('refuses to write through a symlink an earlier layer made', async () => {
    await extract([{ name: 'x', type: 'symlink', linkname: outside }], true);
    await expect(extract([{ name: 'x/pwned', body: 'pwned' }], true)).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(extract([{ name: 'x/.wh.victim' }], true)).rejects.toMatchObject({ code: 'invalid_input' });
    expect(await readdir(outside)).toEqual(['victim']);
  });

  it('replaces a symlink by the entry of the same name, never writing to its target', async () => {
    await extract([
      { name: 'x', type: 'symlink', linkname: join(outside, 'victim') },
      { name: 'x', body: 'replaced' },
      { name: 'd', type: 'symlink', linkname: outside },
      { name: 'd', type: 'directory' },
      { name: 'd/inside', body: 'inside' },
    ]);
    expect(await readFile(join(outside, 'victim'), 'utf8')).toBe('host\n');
    expect(await readFile(join(root, 'x'), 'utf8')).toBe('replaced');
    expect((await lstat(join(root, 'd'))).isDirectory()).toBe(true);
    expect(await readdir(outside)).toEqual(['victim']);
  });

  it('refuses absolute names, "..", and NUL bytes, in names and link targets', async () => {
    await expect(extract([{ name: join(outside, 'abs'), body: 'x' }])).rejects.toMatchObject({ message: /absolute/ });
    await expect(extract([{ name: '../outside/dotdot', body: 'x' }])).rejects.toMatchObject({ message: /"\.\."/ });
    await expect(extract([{ name: 'a/../../outside/dotdot', body: 'x' }])).rejects.toMatchObject({ message: /"\.\."/ });
    await expect(extract([{ name: 'ok', type: 'symlink', linkname: 'a', pax: { linkpath: 'a\0b' } }])).rejects.toMatchObject({
      message: /NUL/,
    });
    await expect(extract([{ name: 'ok', pax: { path: 'etc/a\0../../b' }, body: 'x' }])).rejects.toMatchObject({ message: /NUL/ });
    expect(await readdir(outside)).toEqual(['victim']);
    expect(archivePathParts('./a//./b/', 'x')).toEqual(['a', 'b']);
  });

  it('allows hard links only to regular files already inside the root', async () => {
    await extract([
      { name: 'a', body: 'shared' },
      { name: 'b', type: 'link', linkname: 'a' },
    ]);
    expect((await stat(join(root, 'b'))).ino).toBe((await stat(join(root, 'a'))).ino);
    for (const linkname of [join(outside, 'victim'), '../outside/victim', 'missing', 'dir']) {
      await expect(
        extract([
          { name: 'dir', type: 'directory' },
          { name: 'c', type: 'link', linkname },
          { name: 'c', body: 'pwned' },
        ]),
      ).rejects.toMatchObject({ code: 'invalid_input', message: /hard link/ });
    }
    await extract([
      { name: 'l', type: 'symlink', linkname: join(outside, 'victim') },
      { name: 'c', type: 'link', linkname: 'l' },
    ]).catch(() => undefined);
    expect(existsSync(join(root, 'c'))).toBe(false);
    expect((await stat(join(outside, 'victim'))).nlink).toBe(1);
    expect(await readFile(join(outside, 'victim'), 'utf8')).toBe('host\n');
  });

  it('leaves device nodes and FIFOs out, and clears setuid/setgid (the sticky bit stays)', async () => {
    const stats = await extract([
      { name: 'dev/sda', type: 'block-device', devmajor: 8, devminor: 0 },
      { name: 'dev/mem', type: 'character-device', devmajor: 1, devminor: 1 },
      { name: 'dev/null0', type: 'character-device', devmajor: 0, devminor: 0 },
      { name: 'fifo', type: 'fifo' },
      { name: 'suid', body: 'x', mode: 0o4755 },
      { name: 'sgid-dir', type: 'directory', mode: 0o2775 },
      { name: 'tmp', type: 'directory', mode: 0o1777 },
    ]);
    for (const name of ['dev/sda', 'dev/mem', 'dev/null0', 'fifo']) expect(existsSync(join(root, name))).toBe(false);
    expect((await lstat(join(root, 'suid'))).mode & 0o7777).toBe(0o755);
    expect((await lstat(join(root, 'sgid-dir'))).mode & 0o7777).toBe(0o775);
    expect((await lstat(join(root, 'tmp'))).mode & 0o7777).toBe(0o1777);
    expect(stats).toMatchObject({ skippedSpecial: 4, strippedModes: 2 });
  });

  it('applies whiteouts and opaque directories the way Docker does', async () => {
    await extract(
      [
        { name: 'etc/', type: 'directory' },
        { name: 'etc/gone', body: 'lower' },
        { name: 'etc/kept', body: 'lower' },
        { name: 'opq/', type: 'directory' },
        { name: 'opq/lower', body: 'lower' },
        { name: 'opq/a/', type: 'directory' },
        { name: 'opq/a/old', body: 'lower' },
        { name: 'link', type: 'symlink', linkname: '/etc' },
      ],
      true,
    );
    await extract(
      [
        { name: 'etc/.wh.gone' },
        { name: 'opq/', type: 'directory' },
        { name: 'opq/a/', type: 'directory' },
        { name: 'opq/a/new', body: 'upper' },
        // The marker after some of this layer's entries: they stay, the lower layer's go.
        { name: 'opq/.wh..wh..opq' },
        { name: 'opq/later', body: 'upper' },
        { name: '.wh.link' },
      ],
      true,
    );
    expect(await readdir(join(root, 'etc'))).toEqual(['kept']);
    expect((await readdir(join(root, 'opq'))).sort()).toEqual(['a', 'later']);
    expect(await readdir(join(root, 'opq/a'))).toEqual(['new']);
    expect(existsSync(join(root, 'link'))).toBe(false);
  });

  it('keeps symlinks as text: an absolute target stays for the sandbox to resolve in its own root', async () => {
    await extract([{ name: 'bin', type: 'symlink', linkname: '/usr/bin' }]);
    expect(await readlink(join(root, 'bin'))).toBe('/usr/bin');
  });

  it('says an archive that is not a tar is not one', async () => {
    await expect(
      extractTar(Readable.from([Buffer.alloc(1024, 7)]), { root, what: 'layer l0/layer.tar', layer: true }),
    ).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/^layer l0\/layer\.tar is not a tar archive/) });
  });

  it('stops an archive of more entries than the cap', async () => {
    const pack = tar.pack();
    pack.entry({ name: 'e', type: 'directory' });
    pack.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of pack as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
    const entry = Buffer.concat(chunks).subarray(0, 512);
    const entries = Buffer.concat(Array.from({ length: 64 }, () => entry));
    function* many() {
      for (;;) yield entries;
    }
    await expect(extractTar(Readable.from(many()), { root, what: 'the archive', layer: false, maxEntries: 1000 })).rejects.toMatchObject({
      code: 'too_large',
      message: expect.stringContaining('more than 1,000 entries'),
    });
  });

  it('stops an endless archive at the byte budget, while it streams', async () => {
    // A tar that never ends: if the size were checked after unpacking, this would never return.
    const pack = tar.pack();
    pack.entry({ name: 'f', size: 1024 * 1024 }, Buffer.alloc(1024 * 1024, 1));
    pack.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of pack as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
    const entry = Buffer.concat(chunks).subarray(0, 512 + 1024 * 1024);
    function* endless() {
      for (;;) yield entry;
    }
    const budget = new ImportBudget(16 * 1024 * 1024, 'the archive');
    await expect(extractTar(charged(Readable.from(endless()), budget), { root, what: 'the archive', layer: false })).rejects.toMatchObject({
      code: 'too_large',
      message: expect.stringContaining('SANDCAST_IMAGE_IMPORT_MAX_BYTES'),
    });
    expect(budget.used).toBeLessThanOrEqual(16 * 1024 * 1024 + entry.length);
    expect((await stat(join(root, 'f'))).size).toBeLessThanOrEqual(1024 * 1024);
  });
});
