import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { InstanceDisks } from '../src/disk.ts';
import { ensureLayout, layoutOf } from '../src/layout.ts';
import { mountsUnder } from '../src/overlay.ts';
import { supportsReflink } from '../src/reflink-pool.ts';
import { BASE_CONFIG, localTest, requireLocal, type TempProvider, tempProvider } from './support.ts';

/** Loop devices backed by a file under `dir` (other data dirs on this host are not counted). */
const loopsUnder = (dir: string) =>
  execFileSync('losetup', ['-a'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(dir));

const hasMkfsXfs = () => {
  try {
    execFileSync('/bin/sh', ['-c', 'command -v mkfs.xfs']);
    return true;
  } catch {
    return false;
  }
};

interface Record {
  layers: string[];
  diskStore?: boolean;
  config: { diskMb: number };
}

/** Issue 16: fork in constant time by cloning the source's disk (ADR 0031), and the copy path where that is not possible. */
describe('local provider fork', () => {
  let run = false;
  let cloning = false;
  let temp: TempProvider;
  const warnings: string[] = [];

  beforeAll(async () => {
    run = await requireLocal('fork');
    if (!run) return;
    cloning = hasMkfsXfs() || (await supportsReflink(tmpdir()));
    if (!cloning) {
      const reason = 'mkfs.xfs is missing and the temp dir cannot clone files: the clone path cannot run (install xfsprogs)';
      if (process.env.CI === 'true') throw new Error(`CI=true but ${reason}`);
      console.warn(`[local provider:fork] clone tests skipped: ${reason}`);
    }
    temp = await tempProvider({ onWarning: (message) => warnings.push(message) });
  }, 60_000);

  afterAll(async () => {
    if (!run) return;
    const dataDir = temp.dataDir;
    await temp.dispose();
    // Every sandbox disk and the pool itself are released once nothing runs.
    expect(loopsUnder(dataDir)).toEqual([]);
  }, 60_000);

  const test = localTest(() => run);
  const cloneTest = localTest(() => run && cloning);
  const sh = async (id: string, script: string) => {
    const result = await temp.provider.exec(id, { command: ['sh', '-c', script] });
    return result.exitCode === 0 ? result.stdout : `exit ${result.exitCode}: ${result.stderr}`;
  };
  const record = async (id: string, dataDir = temp.dataDir) =>
    JSON.parse(await readFile(join(dataDir, 'providers/local/instances', id, 'instance.json'), 'utf8')) as Record;
  const create = async (diskMb = 256) =>
    (await temp.provider.create({ sandboxId: `src-${Date.now()}`, environmentId: 'env', config: { ...BASE_CONFIG, diskMb } })).instanceId;
  const fork = async (id: string, count: number) =>
    (
      await temp.provider.fork!(
        id,
        Array.from({ length: count }, (_, i) => ({ sandboxId: `fork-${i}-${Date.now()}` })),
      )
    ).map((f) => f.instanceId);

  cloneTest('a create clones a blank disk; the pool is mounted under the data dir; no fallback warning', async () => {
    const id = await create();
    expect((await record(id)).diskStore).toBe(true);
    expect(existsSync(join(temp.dataDir, 'providers/local/disks', `${id}.img`))).toBe(true);
    expect(existsSync(join(temp.dataDir, 'providers/local/disks/blank-ext4-v1-256M'))).toBe(true);
    expect(warnings.filter((w) => /clone files/.test(w))).toEqual([]);
    await temp.provider.destroy(id);
    expect(existsSync(join(temp.dataDir, 'providers/local/disks', `${id}.img`))).toBe(false);
  });

  cloneTest('forks are isolated from the source and from each other; no layer is copied', async () => {
    const source = await create();
    expect(
      await sh(source, 'echo before > /workspace/shared && mkdir -p /usr/local/share/forkmark && echo usr > /usr/local/share/forkmark/f'),
    ).toBe('');
    const [a, b] = await fork(source, 2);
    for (const id of [a!, b!]) {
      expect(await sh(id, 'cat /workspace/shared /usr/local/share/forkmark/f')).toBe('before\nusr\n');
      const forked = await record(id);
      expect(forked.diskStore).toBe(true);
      expect(forked.layers).toEqual((await record(source)).layers);
    }
    expect(await sh(source, 'echo later > /workspace/source-only && echo changed > /workspace/shared')).toBe('');
    expect(await sh(a!, 'echo mine > /workspace/a-only && echo usr-a > /usr/local/share/forkmark/f')).toBe('');
    expect(await sh(a!, 'cat /workspace/shared; ls /workspace')).toBe('before\na-only\nshared\n');
    expect(await sh(b!, 'cat /workspace/shared /usr/local/share/forkmark/f; ls /workspace')).toBe('before\nusr\nshared\n');
    expect(await sh(source, 'cat /usr/local/share/forkmark/f; ls /workspace')).toBe('usr\nshared\nsource-only\n');
    for (const id of [source, a!, b!]) await temp.provider.destroy(id);
  });

  cloneTest('a file written just before the fork (still in the page cache, never synced) is in every fork', async () => {
    const source = await create();
    const sum = await sh(source, 'head -c 8388608 /dev/urandom > /workspace/fresh && md5sum < /workspace/fresh');
    expect(sum).toMatch(/^[0-9a-f]{32}/);
    const forks = await fork(source, 3);
    for (const id of forks) expect(await sh(id, 'md5sum < /workspace/fresh')).toBe(sum);
    for (const id of [source, ...forks]) await temp.provider.destroy(id);
  });

  cloneTest('a stopped then started sandbox forks; a fork stops and starts with its files; a stopped one is refused', async () => {
    const source = await create();
    expect(await sh(source, 'echo kept > /workspace/kept')).toBe('');
    await temp.provider.stop!(source);
    await expect(fork(source, 1)).rejects.toMatchObject({ code: 'not_running' });
    await temp.provider.start!(source);
    const [copy] = await fork(source, 1);
    expect(await sh(copy!, 'cat /workspace/kept && echo own > /workspace/own')).toBe('kept\n');
    await temp.provider.stop!(copy!);
    await temp.provider.start!(copy!);
    expect(await sh(copy!, 'cat /workspace/kept /workspace/own')).toBe('kept\nown\n');
    // A fork of a fork clones the fork's disk.
    const [second] = await fork(copy!, 1);
    expect(await sh(second!, 'cat /workspace/own')).toBe('own\n');
    for (const id of [source, copy!, second!]) await temp.provider.destroy(id);
  });

  cloneTest('two forks of one source at once both succeed (the freezes take turns)', async () => {
    const source = await create();
    expect(await sh(source, 'echo both > /workspace/f')).toBe('');
    const made = (await Promise.all([fork(source, 2), fork(source, 2)])).flat();
    expect(made).toHaveLength(4);
    for (const id of made) expect(await sh(id, 'cat /workspace/f')).toBe('both\n');
    // The source is thawed: it still writes.
    expect(await sh(source, 'echo after > /workspace/g && cat /workspace/g')).toBe('after\n');
    for (const id of [source, ...made]) await temp.provider.destroy(id);
  });

  cloneTest("diskMb is still enforced in a fork: writing past the source's size fails with ENOSPC", async () => {
    const source = await create(64);
    expect(await sh(source, 'dd if=/dev/zero of=/workspace/half bs=1M count=24 status=none')).toBe('');
    const [copy] = await fork(source, 1);
    expect((await record(copy!)).config.diskMb).toBe(64);
    const past = await sh(copy!, 'dd if=/dev/zero of=/workspace/past bs=1M count=100 2>&1; echo "exit=$?"');
    expect(past).toMatch(/No space left on device/);
    expect(past).toMatch(/exit=1/);
    // The source's own space is its own: the fork's fill took none of it.
    expect(await sh(source, 'dd if=/dev/zero of=/workspace/more bs=1M count=24 status=none && echo ok')).toBe('ok\n');
    for (const id of [source, copy!]) await temp.provider.destroy(id);
  });

  test('a fork of a missing or malformed instance is not_found', async () => {
    await expect(fork('sbx-0000000000000000', 1)).rejects.toMatchObject({ code: 'not_found' });
    await expect(fork('../../etc', 1)).rejects.toMatchObject({ code: 'not_found' });
  });

  test('create, fork and destroy leave no loop device behind', async () => {
    const before = loopsUnder(join(temp.dataDir, 'providers/local/instances')).length;
    const diskLoops = () => loopsUnder(temp.dataDir).filter((line) => !line.includes('disks.xfs'));
    const baseline = diskLoops().length;
    const source = await create();
    const forks = await fork(source, 3);
    expect(diskLoops().length).toBe(baseline + 4);
    for (const id of [source, ...forks]) await temp.provider.destroy(id);
    expect(diskLoops().length).toBe(baseline);
    expect(loopsUnder(join(temp.dataDir, 'providers/local/instances')).length).toBe(before);
  });

  cloneTest('a restart of the provider mounts the pool again: a stopped sandbox starts with its files', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandcast-local-fork-restart-'));
    let second: TempProvider | null = null;
    try {
      const first = await tempProvider({ dataDir });
      const id = (await first.provider.create({ sandboxId: 'restart', environmentId: 'env', config: { ...BASE_CONFIG, diskMb: 128 } }))
        .instanceId;
      expect((await first.provider.exec(id, { command: ['sh', '-c', 'echo survived > /workspace/s'] })).exitCode).toBe(0);
      await first.provider.stop!(id);
      await first.provider.close?.();
      // Nothing ran on it: the pool was unmounted, its loop device released.
      expect(loopsUnder(dataDir)).toEqual([]);
      second = await tempProvider({ dataDir });
      await second.provider.start!(id);
      expect((await second.provider.exec(id, { command: ['cat', '/workspace/s'] })).stdout).toBe('survived\n');
      expect((await mountsUnder(join(dataDir, 'providers/local/disks'))).length).toBeGreaterThan(0);
    } finally {
      if (second) await second.dispose();
      else await rm(dataDir, { recursive: true, force: true });
    }
    expect(loopsUnder(dataDir)).toEqual([]);
  });

  test('without clones (no mkfs.xfs, or diskClones off) a fork copies the files into a layer, isolated alike', async () => {
    const copyPath = await tempProvider({ diskClones: false });
    try {
      const source = (
        await copyPath.provider.create({ sandboxId: 'copy-src', environmentId: 'env', config: { ...BASE_CONFIG, diskMb: 128 } })
      ).instanceId;
      const exec = async (id: string, script: string) => (await copyPath.provider.exec(id, { command: ['sh', '-c', script] })).stdout;
      await exec(source, 'echo copied > /workspace/f');
      const [copy] = (await copyPath.provider.fork!(source, [{ sandboxId: 'copy-fork' }])).map((f) => f.instanceId);
      const forked = await record(copy!, copyPath.dataDir);
      expect(forked.diskStore).toBeUndefined();
      expect(forked.layers.length).toBe((await record(source, copyPath.dataDir)).layers.length + 1);
      expect(await exec(copy!, 'cat /workspace/f && echo fork > /workspace/f')).toBe('copied\n');
      expect(await exec(source, 'cat /workspace/f')).toBe('copied\n');
    } finally {
      await copyPath.dispose();
    }
  });

  test('the missing formatter is detected: the copy mode, with a warning that names xfsprogs', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandcast-local-nomkfs-'));
    try {
      const layout = layoutOf(dataDir);
      await ensureLayout(layout);
      const said: string[] = [];
      const disks = new InstanceDisks(layout, { clones: true, warn: (m) => said.push(m), mkfsXfs: 'mkfs.xfs-not-installed' });
      if (await supportsReflink(layout.root)) {
        expect(await disks.prepare()).toBe('native');
        return;
      }
      expect(await disks.prepare()).toBe('copy');
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/mkfs\.xfs-not-installed is not installed.*xfsprogs/);
      expect(await disks.canClone({ id: 'sbx-0000000000000000', diskStore: true })).toBe(false);
      expect(existsSync(layout.diskPool)).toBe(false);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
