import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isProviderError, type SandboxProvider, type TemplateRef } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureImage, DEFAULT_CAPTURE_DEADLINES, releaseLeftoverPauses, releasePause } from './capture.ts';
import { CaptureGate } from './capture-gate.ts';
import { defaultEngineAddress, EnginePool, withDeadline } from './connection.ts';
import { handleFor } from './containers.ts';
import { createDockerProvider } from './docker-provider.ts';
import { driveFreezer, findFreezer, freezerState } from './freezer.ts';
import { LABEL } from './labels.ts';
import { useDockerEngine } from './test-support/engine-suite.ts';
import { TEST_IMAGE, testDocker } from './test-support/test-engine.ts';

const PAGES = 256;
/**
 * Rewrites /workspace/data (256 pages of 4 KiB) in place, page after page, each sweep with the
 * next counter. A snapshot taken at one instant shows at most one step between consecutive
 * pages, and never a later page newer than an earlier one. The first sweep completes before the
 * exec returns; the writer then keeps going in the background.
 */
const WRITER = `
open(F, '+>', '/workspace/data') or die $!;
my $i = 0;
sub sweep { $i++; my $page = sprintf("%015d\\n", $i) x 256; for my $k (0 .. ${PAGES - 1}) { sysseek(F, $k * 4096, 0); syswrite(F, $page) } }
sweep();
exit 0 if fork();
open STDIN, '<', '/dev/null'; open STDOUT, '>', '/dev/null'; open STDERR, '>', '/dev/null';
sweep() while 1;
`;

/** Why the captured file is not one instant's content, or null when it is. */
function tornAt(data: Buffer): string | null {
  if (data.length !== PAGES * 4096) return `the file has ${data.length} bytes, not ${PAGES * 4096}`;
  const values: number[] = [];
  for (let k = 0; k < PAGES; k++) {
    const lines = new Set(
      data
        .subarray(k * 4096, (k + 1) * 4096)
        .toString('latin1')
        .split('\n')
        .slice(0, 256),
    );
    if (lines.size !== 1) return `page ${k} mixes ${[...lines].slice(0, 3).join(', ')}`;
    values.push(Number([...lines][0]));
  }
  for (let k = 1; k < PAGES; k++)
    if (values[k]! > values[k - 1]!) return `page ${k} (${values[k]}) is newer than page ${k - 1} (${values[k - 1]})`;
  if (values[0]! - values[PAGES - 1]! > 1) return `pages span sweeps ${values[PAGES - 1]}..${values[0]}`;
  return null;
}

describe('docker capture pauses the setup container, and the pause always ends', () => {
  const engine = useDockerEngine();
  const installation = `pause-test-${process.pid}-${randomBytes(3).toString('hex')}`;
  let provider: SandboxProvider;
  const pool = new EnginePool(defaultEngineAddress(undefined));
  const cleanup: Array<() => Promise<unknown>> = [];

  beforeAll(() => {
    // No upkeep timer: these tests pause containers themselves, which the upkeep would undo.
    provider = createDockerProvider({
      dataDir: '/tmp/sandcast-docker-pause-tests',
      installationId: installation,
      diskCheckIntervalMs: 3_600_000,
    });
  });
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    // A commit that finished after its capture's deadline left an image no test saw: the
    // reconciler's job in a server; here, this file's installation cleans up after itself.
    const docker = testDocker();
    for (const image of await docker.listImages({ filters: { label: [`${LABEL.capturedBy}=${installation}`] } }).catch(() => [])) {
      await docker
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => undefined);
    }
    await provider.close?.();
  }, 120_000);

  const setup = async () => {
    const setupSessionId = `setup-pause-${randomBytes(4).toString('hex')}`;
    const lease = await provider.startInteractiveSetup({
      setupSessionId,
      environmentId: 'env-pause',
      config: { image: TEST_IMAGE },
      source: null,
      ttlSeconds: 600,
    });
    cleanup.push(() => provider.cancelInteractiveSetup(lease.leaseId));
    return { setupSessionId, leaseId: lease.leaseId };
  };
  const forget = (template: TemplateRef) =>
    cleanup.push(() =>
      testDocker()
        .getImage(template.digest ?? template.ref)
        .remove({ force: true }),
    );

  it('a file rewritten continuously during the capture is captured as one instant, capture after capture', async (ctx) => {
    engine.need(ctx);
    const { setupSessionId, leaseId } = await setup();
    const started = await provider.exec(leaseId, { command: ['perl', '-e', WRITER] });
    expect(started.exitCode, started.stderr).toBe(0);
    for (let round = 0; round < 3; round++) {
      const template = await provider.captureTemplate({ leaseId, setupSessionId, environmentId: 'env-pause' });
      forget(template);
      const { instanceId } = await provider.create({
        sandboxId: `sbx-pause-${round}`,
        environmentId: 'env-pause',
        config: { image: TEST_IMAGE },
        template,
      });
      cleanup.push(() => provider.destroy(instanceId));
      expect(tornAt(await provider.readFile(instanceId, '/workspace/data'))).toBeNull();
    }
    // The writer was paused, not stopped: it still runs after the captures.
    const still = await provider.exec(leaseId, { command: ['sh', '-c', 'cat /proc/[0-9]*/comm | grep -c perl'] });
    expect(Number(still.stdout.trim())).toBeGreaterThanOrEqual(1);
  });

  it('a container left frozen in its cgroup is thawed by the watchdog, and the engine runs commands in it again', async (ctx) => {
    engine.need(ctx);
    const { leaseId } = await setup();
    const info = await testDocker().getContainer(leaseId).inspect();
    const freezer = await findFreezer(info.State.Pid, info.Id);
    if (!freezer) ctx.skip('no writable cgroup freezer for the container here (a remote engine, or not root)');
    // Freeze it behind the engine's back, as a pause that stuck leaves it.
    await driveFreezer(freezer!, 'FROZEN', 5_000);
    // runc refuses to start a process in a frozen cgroup; the exec reports the runtime's failure.
    const refused = await provider.exec(leaseId, { command: ['true'] });
    expect(refused.exitCode).not.toBe(0);

    const outcome = await releasePause(handleFor(pool, leaseId), freezer, { ...DEFAULT_CAPTURE_DEADLINES, callMs: 10_000 });
    expect(outcome).toBe('thawed');
    expect((await readFile(freezer!.path, 'utf8')).trim()).toBe(freezer!.version === 1 ? 'THAWED' : '0');
    expect((await provider.exec(leaseId, { command: ['echo', 'alive'] })).stdout).toBe('alive\n');
    expect((await testDocker().getContainer(leaseId).inspect()).State.Status).toBe('running');
  });

  it('a capture of a container frozen behind the engine fails clearly, leaves it thawed, and the next capture works', async (ctx) => {
    engine.need(ctx);
    const { setupSessionId, leaseId } = await setup();
    const info = await testDocker().getContainer(leaseId).inspect();
    const freezer = await findFreezer(info.State.Pid, info.Id);
    if (!freezer) ctx.skip('no writable cgroup freezer for the container here (a remote engine, or not root)');
    await driveFreezer(freezer!, 'FROZEN', 5_000);

    const failed = await provider.captureTemplate({ leaseId, setupSessionId, environmentId: 'env-pause' }).then(
      (template) => {
        forget(template);
        return null;
      },
      (e: unknown) => e,
    );
    // runc refuses to pause a cgroup it finds frozen; another runtime may pause it and succeed.
    if (failed !== null) {
      expect(isProviderError(failed) && failed.code).toBe('capture_failed');
      expect((failed as Error).message).toMatch(/pause/);
    }
    expect(await freezerState(freezer!)).toBe('THAWED');
    const template = await provider.captureTemplate({ leaseId, setupSessionId, environmentId: 'env-pause' });
    forget(template);
    expect(await freezerState(freezer!)).toBe('THAWED');
  });

  it('execs racing captures never leave the container frozen or the engine wedged', async (ctx) => {
    engine.need(ctx);
    const { setupSessionId, leaseId } = await setup();
    const docker = testDocker();
    const container = docker.getContainer(leaseId);
    const info = await container.inspect();
    const freezer = await findFreezer(info.State.Pid, info.Id);
    await provider.exec(leaseId, { command: ['perl', '-e', WRITER] });
    // Execs from outside Sandcast (an operator's `docker exec`), which no gate holds back.
    let racing = true;
    const limits = { action: 'run an outside exec', engineUrl: 'the test engine' };
    const outsider = (async () => {
      while (racing) {
        // Its calls may hang while the engine is wedged; the test never waits on them for long.
        const exec = await withDeadline(container.exec({ Cmd: ['true'], AttachStdout: true }), 10_000, limits).catch(() => null);
        const stream = exec ? await withDeadline(exec.start({ hijack: true, stdin: false }), 10_000, limits).catch(() => null) : null;
        if (stream)
          await withDeadline(
            new Promise((resolve) => stream.on('close', resolve).on('end', resolve).on('error', resolve).resume()),
            10_000,
            limits,
          ).catch(() => null);
      }
    })();
    const handle = handleFor(pool, leaseId, { gate: new CaptureGate() });
    const deadlines = { ...DEFAULT_CAPTURE_DEADLINES, callMs: 12_000 };
    try {
      for (let round = 0; round < 5; round++) {
        const outcome = await captureImage(handle, { leaseId, setupSessionId, environmentId: 'env-pause', installation }, deadlines).then(
          (template) => {
            forget(template);
            return 'captured';
          },
          (e: unknown) => (isProviderError(e) ? e.code : String(e)),
        );
        // A capture may fail (the engine's pause gave up, or a slow engine missed a deadline), clearly.
        expect(['captured', 'capture_failed', 'timeout']).toContain(outcome);
        if (freezer) expect(await freezerState(freezer)).toBe('THAWED');
        expect((await container.inspect()).State.Status).toBe('running');
      }
    } finally {
      racing = false;
      await outsider;
    }
    expect((await provider.exec(leaseId, { command: ['echo', 'alive'] })).stdout).toBe('alive\n');
  }, 300_000);

  it('a container a killed capture left paused is unpaused by the upkeep; one this process is capturing is left alone', async (ctx) => {
    engine.need(ctx);
    const left = await setup();
    const busy = await setup();
    const docker = testDocker();
    await docker.getContainer(left.leaseId).pause();
    await docker.getContainer(busy.leaseId).pause();
    const gate = new CaptureGate();
    let released: string[] = [];
    await gate.capture(busy.leaseId, async () => {
      released = await releaseLeftoverPauses(pool, installation, gate);
    });
    expect(released).toContain(left.leaseId);
    expect(released).not.toContain(busy.leaseId);
    expect((await docker.getContainer(left.leaseId).inspect()).State.Status).toBe('running');
    expect((await docker.getContainer(busy.leaseId).inspect()).State.Status).toBe('paused');
    await docker.getContainer(busy.leaseId).unpause();
  });
});
