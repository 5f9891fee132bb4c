import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportBudget, openArchive } from './archive-stream.ts';
import { extractTar } from './safe-extract.ts';

/** A decompressor missing here skips its case with the reason, except under CI=true, where it fails. */
const missing = (tool: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`]);
    return false;
  } catch {
    if (process.env.CI === 'true') return false;
    console.warn(`[archive-stream] ${tool} is not installed: its case is skipped`);
    return true;
  }
};

describe('openArchive: any compression, every uncompressed byte counted', () => {
  let work: string;
  let plain: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'sandcast-archive-'));
    await mkdir(join(work, 'src'));
    await writeFile(join(work, 'src/hello'), 'hello\n');
    // 64 MiB of zeros: compresses to almost nothing, so it is a small bomb against a 1 MiB budget.
    await writeFile(join(work, 'src/zeros'), Buffer.alloc(64 * 1024 * 1024));
    plain = join(work, 'plain.tar');
    execFileSync('tar', ['-C', join(work, 'src'), '-cf', plain, 'hello', 'zeros']);
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  const open = async (file: string, limit: number) =>
    openArchive(file, { what: 'the archive', budget: new ImportBudget(limit, 'the archive'), size: (await stat(file)).size });

  for (const [tool, ext] of [
    ['gzip', 'gz'],
    ['bzip2', 'bz2'],
    ['xz', 'xz'],
    ['zstd', 'zst'],
  ] as const) {
    it.skipIf(missing(tool))(`reads ${tool}, and stops a ${tool} bomb at the budget`, async () => {
      const file = `${plain}.${ext}`;
      execFileSync('sh', ['-c', `${tool} -c < "$1" > "$2"`, 'sh', plain, file]);
      expect((await stat(file)).size).toBeLessThan(1024 * 1024);
      const root = join(work, `out-${ext}`);
      await mkdir(root);
      await extractTar(await open(file, 128 * 1024 * 1024), { root, what: 'the archive', layer: false });
      expect(await readFile(join(root, 'hello'), 'utf8')).toBe('hello\n');
      const bombed = join(work, `bomb-${ext}`);
      await mkdir(bombed);
      await expect(extractTar(await open(file, 1024 * 1024), { root: bombed, what: 'the archive', layer: false })).rejects.toMatchObject({
        code: 'too_large',
      });
      expect((await stat(join(bombed, 'zeros')).catch(() => ({ size: 0 }))).size).toBeLessThanOrEqual(1024 * 1024);
    });
  }

  it('says when compressed data is damaged', async () => {
    const file = join(work, 'broken.xz');
    await writeFile(file, Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), Buffer.alloc(4096, 9)]));
    const root = join(work, 'out-broken');
    await mkdir(root);
    await expect(extractTar(await open(file, 1024 * 1024), { root, what: 'the archive', layer: false })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('not valid xz data'),
    });
  });
});
