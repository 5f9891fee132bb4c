import { randomBytes } from 'node:crypto';
import { isProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultEngineAddress, EnginePool } from './connection.ts';
import { createDiskWatchdog, type DiskWatchdog } from './disk-limit.ts';
import { createDockerProvider } from './docker-provider.ts';
import { LABEL } from './labels.ts';
import { useDockerEngine } from './test-support/engine-suite.ts';
import { TEST_IMAGE, testDocker } from './test-support/test-engine.ts';

const MIB = 1024 * 1024;
const LIMIT_MB = 32;

describe('docker sandbox disk limit (diskMb)', () => {
  const engine = useDockerEngine();
  const installation = `disk-test-${process.pid}-${randomBytes(3).toString('hex')}`;
  let provider: SandboxProvider;
  let watchdog: DiskWatchdog;
  const created: string[] = [];

  beforeAll(() => {
    // The provider's own timer is out of the way; each test measures when it chooses.
    provider = createDockerProvider({
      dataDir: '/tmp/sandcast-docker-disk-tests',
      installationId: installation,
      diskCheckIntervalMs: 3_600_000,
    });
    watchdog = createDiskWatchdog({ pool: new EnginePool(defaultEngineAddress(undefined)), installation, intervalMs: 3_600_000 });
  });
  afterAll(async () => {
    for (const instanceId of created) await provider.destroy(instanceId).catch(() => undefined);
    await provider.close?.();
  }, 60_000);

  const sandbox = async (diskMb: number | undefined) => {
    const { instanceId } = await provider.create({
      sandboxId: `sbx-disk-${randomBytes(3).toString('hex')}`,
      environmentId: 'env-disk',
      config: { image: TEST_IMAGE, ...(diskMb === undefined ? {} : { diskMb }) },
    });
    created.push(instanceId);
    return instanceId;
  };
  const sizeRw = async (instanceId: string) =>
    (
      (await testDocker()
        .getContainer(instanceId)
        .inspect({ size: true } as never)) as unknown as { SizeRw?: number }
    ).SizeRw ?? 0;

  it('one file written past the limit fails at once (EFBIG) and stays at the limit', async (ctx) => {
    engine.need(ctx);
    const id = await sandbox(LIMIT_MB);
    const result = await provider.exec(id, {
      command: ['sh', '-c', `dd if=/dev/zero of=/workspace/big bs=1M count=${LIMIT_MB * 2}; echo dd=$?; stat -c %s /workspace/big`],
    });
    expect(result.stdout).not.toContain('dd=0');
    expect(result.stderr).toMatch(/File size limit exceeded|File too large/);
    expect(Number(result.stdout.trim().split('\n').at(-1))).toBeLessThanOrEqual(LIMIT_MB * MIB);
    // Sandbox root cannot lift the hard limit (no CAP_SYS_RESOURCE).
    const raise = await provider.exec(id, { command: ['sh', '-c', 'ulimit -f unlimited'] });
    expect(raise.exitCode).not.toBe(0);
    expect(await sizeRw(id)).toBeLessThanOrEqual(LIMIT_MB * MIB + MIB);
  });

  it('many files adding up past the limit get the sandbox stopped, and it says why', async (ctx) => {
    engine.need(ctx);
    const id = await sandbox(LIMIT_MB);
    const within = await sandbox(LIMIT_MB);
    const fill = await provider.exec(id, {
      command: [
        'sh',
        '-c',
        `for i in $(seq 1 ${LIMIT_MB + 16}); do dd if=/dev/zero of=/workspace/f$i bs=1M count=1 status=none || exit 1; done; sync`,
      ],
    });
    expect(fill.exitCode).toBe(0);
    await provider.exec(within, { command: ['sh', '-c', 'dd if=/dev/zero of=/workspace/small bs=1M count=4 status=none'] });

    const stopped = await watchdog.check();
    expect(stopped).toContain(id);
    expect(stopped).not.toContain(within);

    const info = await provider.inspect(id);
    expect(info.status).toBe('failed');
    expect(info.detail).toMatch(new RegExp(`disk limit: \\d+ MiB written, limit ${LIMIT_MB} MiB`));
    const refused = await provider.exec(id, { command: ['true'] }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isProviderError(refused) && refused.code).toBe('not_running');
    expect((refused as Error).message).toMatch(/disk limit.*diskMb/);
    expect((await provider.inspect(within)).status).toBe('running');
    // What it wrote stayed in its own writable layer, bounded by what it managed before the stop.
    expect(await sizeRw(id)).toBeLessThan((LIMIT_MB + 17) * MIB);
  });

  it('the limit defaults to 10 GiB and is labelled on the container; a sized rootfs is asked for only where the driver supports it', async (ctx) => {
    engine.need(ctx);
    const id = await sandbox(undefined);
    const info = await testDocker().getContainer(id).inspect();
    expect(info.Config.Labels[LABEL.diskMb]).toBe('10240');
    expect(info.HostConfig.Ulimits).toEqual([{ Name: 'fsize', Soft: 10240 * MIB, Hard: 10240 * MIB }]);
    const driver = await testDocker().info();
    const backing = (driver.DriverStatus as [string, string][]).find(([k]) => k === 'Backing Filesystem')?.[1];
    if (driver.Driver === 'overlay2' && backing !== 'xfs') expect(info.HostConfig.StorageOpt ?? {}).toEqual({});
  });

  it('a config with a disk limit below 16 MiB is refused', async (ctx) => {
    engine.need(ctx);
    const error = await provider
      .create({ sandboxId: 'sbx-disk-tiny', environmentId: 'env-disk', config: { image: TEST_IMAGE, diskMb: 1 } })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isProviderError(error) && error.code).toBe('invalid_config');
    expect((error as Error).message).toMatch(/diskMb/);
  });
});
