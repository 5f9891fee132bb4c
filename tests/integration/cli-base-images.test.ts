import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testDatabases } from '@sandcast/db/testing';
import { createLocalProvider } from '@sandcast/provider-local';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, sandcast as runCli } from './support/cli.ts';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

function sandcast(args: string[], env: Record<string, string>): Promise<CliRun> {
  return runCli(args, env, { timeoutMs: 600_000, encoding: 'latin1' });
}

/** A rootfs of the host's dash and its libraries, tarred: an import needs no download. */
async function miniRootfsTar(dir: string): Promise<string> {
  const root = path.join(dir, 'rootfs');
  const libs = execFileSync('ldd', ['/usr/bin/dash'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /(\/\S+)\s+\(0x/.exec(line)?.[1])
    .filter((p): p is string => !!p);
  await mkdir(path.join(root, 'bin'), { recursive: true });
  await copyFile('/usr/bin/dash', path.join(root, 'bin/sh'));
  for (const lib of libs) {
    await mkdir(path.join(root, path.dirname(lib)), { recursive: true });
    await copyFile(lib, path.join(root, lib));
  }
  for (const sub of ['proc', 'dev', 'tmp', 'workspace', 'etc']) await mkdir(path.join(root, sub), { recursive: true });
  const tar = path.join(dir, 'mini.tar');
  execFileSync('tar', ['-C', root, '-cf', tar, '.']);
  return tar;
}

const skip = await (async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'sandcast-local-probe-'));
  const availability = await createLocalProvider({ dataDir: dir }).availability();
  await rm(dir, { recursive: true, force: true });
  return availability.available ? null : availability.reason;
})();
if (skip && process.env.CI === 'true') throw new Error(`CI=true but the local provider cannot run: ${skip}`);

describe.skipIf(skip !== null)('sandcast image list|import|build-base|export|rm (local provider)', () => {
  let t: TestServer;
  let env: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    t = await startTestServer({ database: testDatabases()[0]!, providers: (dataDir) => [createLocalProvider({ dataDir })] });
    await enableEnvironments(t.client);
    env = { SANDCAST_URL: t.url };
    dir = await mkdtemp(path.join(tmpdir(), 'sandcast-cli-images-'));
  });
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('imports a rootfs tarball, boots from it, exports it, and removes it', async () => {
    const listed = await sandcast(['--json', 'image', 'list'], env);
    expect(JSON.parse(listed.stdout).map((i: { name: string }) => i.name)).toContain('host');

    const imported = await sandcast(['image', 'import', await miniRootfsTar(dir), '--name', 'mini'], env);
    expect(imported.stdout, imported.stderr).toContain('imported mini');
    expect(imported.stderr).toContain('importing');

    expect((await sandcast(['env', 'create', 'mini-env', '--provider', 'local', '--set', 'image=mini'], env)).code).toBe(0);
    const created = JSON.parse((await sandcast(['--json', 'sandbox', 'create', 'mini-env'], env)).stdout);
    const ran = await sandcast(['sandbox', 'exec', created.id, '--', 'sh', '-c', 'echo $((20+22))'], env);
    expect(ran.stdout).toBe('42\n');

    const busy = await sandcast(['image', 'rm', 'mini'], env);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/in use|conflict/i);

    const file = path.join(dir, 'mini-export.tar');
    expect((await sandcast(['image', 'export', 'mini', '--output', file], env)).code).toBe(0);
    const entries = execFileSync('tar', ['-tf', file], { encoding: 'utf8' });
    expect(entries).toContain('manifest.json');
    const piped = await sandcast(['image', 'export', 'mini'], env);
    expect(Buffer.byteLength(piped.stdout, 'latin1')).toBe((await stat(file)).size);

    await sandcast(['sandbox', 'rm', created.id], env);
    await sandcast(['env', 'delete', 'mini-env'], env);
    expect((await sandcast(['image', 'rm', 'mini'], env)).stdout).toContain('removed mini');
    const after = await sandcast(['--json', 'image', 'list'], env);
    expect(JSON.parse(after.stdout).map((i: { name: string }) => i.name)).not.toContain('mini');
  });

  it('refuses what it cannot do, saying what to do instead', async () => {
    const other = await sandcast(['image', 'build-base', 'alpine'], env);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('only "debian"');
    const missing = await sandcast(['image', 'export', 'no-such-image', '--output', path.join(dir, 'x.tar')], env);
    expect(missing.code).toBe(1);
    const badName = await sandcast(['image', 'import', '/etc/hostname', '--name', 'Bad Name'], env);
    expect(badName.code).toBe(1);
    expect(badName.stderr).toContain('validation_failed');
    // The built-in base's name is taken: refused before the upload is read, in words.
    const builtin = await sandcast(['image', 'import', '/etc/hostname', '--name', 'host'], env);
    expect(builtin.code).toBe(1);
    expect(builtin.stderr).toMatch(/"host" already exists \(the built-in base\)/);
  });

  it('builds a Debian base with debootstrap and boots from it', async () => {
    const built = await sandcast(['image', 'build-base', 'debian', '--name', 'debian-min'], env);
    expect(built.stdout, built.stderr).toContain('built debian-min');
    await sandcast(['env', 'create', 'deb-env', '--provider', 'local', '--set', 'image=debian-min'], env);
    const created = JSON.parse((await sandcast(['--json', 'sandbox', 'create', 'deb-env'], env)).stdout);
    const release = await sandcast(['sandbox', 'exec', created.id, '--', 'cat', '/etc/debian_version'], env);
    expect(release.stdout).toMatch(/^\d+\.\d+/);
    await sandcast(['sandbox', 'rm', created.id], env);
  }, 600_000);
});
