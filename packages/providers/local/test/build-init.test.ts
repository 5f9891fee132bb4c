import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const PACKAGE = join(import.meta.dirname, '..');

/**
 * scripts/build-init.sh on a copy of the package's native/ and scripts/ and of provider-sdk's
 * build-static.sh, laid out as in the repository (the real build dir is never touched).
 */
describe('building the sandbox init', () => {
  let dir: string;

  beforeAll(async () => {
    const root = await mkdtemp(join(tmpdir(), 'sandcast-build-init-'));
    dir = join(root, 'providers/local');
    await cp(join(PACKAGE, 'native/sandcast-init.c'), join(dir, 'native/sandcast-init.c'));
    await cp(join(PACKAGE, 'scripts/build-init.sh'), join(dir, 'scripts/build-init.sh'));
    await cp(join(PACKAGE, '../../provider-sdk/scripts/build-static.sh'), join(root, 'provider-sdk/scripts/build-static.sh'));
  });

  afterAll(async () => {
    await rm(join(dir, '../..'), { recursive: true, force: true });
  });

  it('without gcc: fails with what to install, builds nothing', async () => {
    // A PATH with the script's own tools and no compiler.
    const bin = join(dir, 'bin');
    await mkdir(bin);
    for (const tool of ['sh', 'sha256sum', 'cut', 'mkdir', 'mv', 'rm', 'dirname'])
      await symlink((await run('sh', ['-c', `command -v ${tool}`])).stdout.trim(), join(bin, tool));
    const failed = await run(join(bin, 'sh'), [join(dir, 'scripts/build-init.sh')], { env: { PATH: bin } }).catch((e: unknown) => e);
    expect(failed).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/gcc is missing; install it \(apt-get install gcc libc6-dev\)/),
    });
  });

  it('builds a static binary named by the source hash once; a second run reuses it; a changed source builds anew', async (ctx) => {
    if ((await run('sh', ['-c', 'command -v gcc']).catch(() => null)) === null) {
      if (process.env.CI === 'true') throw new Error('CI=true but gcc is missing');
      ctx.skip();
    }
    const first = (await run('sh', [join(dir, 'scripts/build-init.sh')])).stdout.trim();
    expect(first).toMatch(/native\/build\/sandcast-init-[0-9a-f]{16}$/);
    // Static: no program interpreter (readelf comes with gcc's binutils), so it runs in any image.
    const headers = (await run('readelf', ['-l', first])).stdout;
    expect(headers).toMatch(/LOAD/);
    expect(headers).not.toMatch(/INTERP/);
    const built = (await stat(first)).mtimeMs;
    expect((await run('sh', [join(dir, 'scripts/build-init.sh')])).stdout.trim()).toBe(first);
    expect((await stat(first)).mtimeMs).toBe(built);
    await writeFile(join(dir, 'native/sandcast-init.c'), '\n/* changed */\n', { flag: 'a' });
    expect((await run('sh', [join(dir, 'scripts/build-init.sh')])).stdout.trim()).not.toBe(first);
  }, 60_000);
});
