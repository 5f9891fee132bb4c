import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { testDatabases } from '@sandcast/db/testing';
import { createDockerProvider, DOCKER_LABELS } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { enableEnvironments, type TestServer } from '../integration/support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite } from '../integration/support/lifecycle.ts';
import { attack, startHostileServer } from './support/attack.ts';

const CHILD = fileURLToPath(new URL('./support/docker-capture-child.ts', import.meta.url));
const runnable = requireForSuite('hostile docker-sandbox', await dockerSkipReason());

/** Resolves with the first engine event matching `filters` (subscribed before `trigger` runs). */
async function engineEvent(docker: Docker, filters: Record<string, string[]>, trigger: () => Promise<unknown>) {
  const stream = (await docker.getEvents({ filters })) as NodeJS.ReadableStream & { destroy(): void };
  const seen = new Promise<{ Action: string; Actor: { ID: string } }>((resolve, reject) => {
    let buffer = '';
    stream.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const newline = buffer.indexOf('\n');
      if (newline >= 0) resolve(JSON.parse(buffer.slice(0, newline)));
    });
    stream.on('error', reject);
  });
  try {
    await trigger();
    return await seen;
  } finally {
    stream.destroy();
  }
}

describe.skipIf(!runnable)('hostile: Docker sandboxes, through the API', () => {
  let t: TestServer;
  const docker = new Docker();
  beforeAll(async () => {
    const database = testDatabases().find((d) => d.kind === REAL_PROVIDER_DATABASE)!;
    // A short upkeep interval: the disk watchdog and the leftover-pause release act within the test.
    t = await startHostileServer({ database, providers: (dataDir) => [createDockerProvider({ dataDir, diskCheckIntervalMs: 200 })] });
    await enableEnvironments(t.client);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  }, 120_000);

  const sandboxIn = async (name: string, config: Record<string, unknown> = {}) => {
    const env = await t.client.environments.create({ name, provider: 'docker', config: { image: TEST_IMAGE, ...config } });
    return { env, sandbox: await t.client.sandboxes.create({ environmentId: env.id }) };
  };
  const containerOf = async (sandboxId: string) => {
    const [found] = await docker.listContainers({ all: true, size: true, filters: { label: [`${DOCKER_LABELS.sandbox}=${sandboxId}`] } });
    return found as Docker.ContainerInfo & { SizeRw?: number };
  };

  attack('filling the disk: one huge file stops at the limit, many files get the sandbox stopped with the reason', async () => {
    const { sandbox } = await sandboxIn('hostile-disk', { diskMb: 64 });
    const big = await t.client.sandboxes.exec(sandbox.id, {
      command: [
        'sh',
        '-c',
        'dd if=/dev/zero of=/workspace/big bs=1M count=2048 2>&1; echo "dd exit $?"; stat -c %s /workspace/big; rm /workspace/big',
      ],
    });
    expect(big.stdout).toMatch(/File size limit exceeded|File too large/);
    expect(big.stdout).not.toContain('dd exit 0');
    expect(Number(big.stdout.trim().split('\n').at(-1))).toBeLessThanOrEqual(64 * 1024 * 1024);

    const container = await containerOf(sandbox.id);
    const died = await engineEvent(docker, { container: [container.Id], event: ['die'] }, () =>
      t.client.sandboxes.exec(sandbox.id, {
        command: [
          'sh',
          '-c',
          'i=0; while [ $i -lt 2048 ]; do i=$((i+1)); dd if=/dev/zero of=/workspace/f$i bs=1M count=1 status=none || exit 1; done',
        ],
        timeoutMs: 120_000,
      }),
    );
    expect(died.Actor.ID).toBe(container.Id);
    const refused = await t.fetch(`/api/sandboxes/${sandbox.id}/exec`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ command: ['true'] }),
    });
    expect(refused.status).toBe(409);
    expect(refused.text).toMatch(/disk limit: \d+ MiB written, limit 64 MiB/);
    // The writes stayed in the sandbox's own layer and stopped far short of what it tried (2 GiB).
    expect((await containerOf(sandbox.id)).SizeRw).toBeLessThan(1024 * 1024 * 1024);
    await t.client.sandboxes.delete(sandbox.id);
  });

  attack("writing the kernel's settings from inside fails: /proc/sys is read-only, and cannot be remounted", async () => {
    const { sandbox } = await sandboxIn('hostile-procsys');
    const targets = ['kernel/core_pattern', 'kernel/panic', 'vm/drop_caches', 'vm/overcommit_memory'];
    // drop_caches is write-only: the host's values are compared for the readable ones.
    const readable = targets.filter((p) => p !== 'vm/drop_caches');
    const before = await Promise.all(readable.map((p) => readFile(`/proc/sys/${p}`, 'utf8')));
    const script = [
      ...targets.map((p) => `(echo 1 > /proc/sys/${p}) 2>&1 && echo "WROTE ${p}"`),
      '(echo h > /proc/sysrq-trigger) 2>/dev/null && echo "WROTE sysrq-trigger"',
      'mount -o remount,rw /proc/sys 2>/dev/null && echo REMOUNTED',
      'mount -t proc proc /mnt 2>/dev/null && echo MOUNTED-PROC',
      'echo "kcore bytes: $(head -c 16 /proc/kcore 2>/dev/null | wc -c)"',
      'true',
    ].join('; ');
    const result = await t.client.sandboxes.exec(sandbox.id, { command: ['sh', '-c', script] });
    expect(result.stdout).not.toMatch(/WROTE|REMOUNTED|MOUNTED-PROC/);
    expect(result.stdout.match(/Read-only file system/g)).toHaveLength(targets.length);
    expect(result.stdout).toContain('kcore bytes: 0');
    expect(await Promise.all(readable.map((p) => readFile(`/proc/sys/${p}`, 'utf8')))).toEqual(before);
    await t.client.sandboxes.delete(sandbox.id);
  });

  attack('with network none a sandbox has no route out and cannot reach the server on the host loopback', async () => {
    const { env, sandbox } = await sandboxIn('hostile-network');
    expect(env.config).toMatchObject({ network: 'none' });
    const port = new URL(t.url).port;
    const result = await t.client.sandboxes.exec(sandbox.id, {
      command: [
        'bash',
        '-c',
        `ls /sys/class/net; echo "routes: $(tail -n +2 /proc/net/route | wc -l) $(tail -n +2 /proc/net/ipv6_route 2>/dev/null | grep -vc ' lo$')"; (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo REACHED-SERVER; true`,
      ],
    });
    expect(result.stdout.split('\n')[0]).toBe('lo');
    expect(result.stdout).toContain('routes: 0 0');
    expect(result.stdout).not.toContain('REACHED-SERVER');
    await t.client.sandboxes.delete(sandbox.id);
  });

  attack('a capture killed with SIGKILL mid-commit leaves nothing behind after a reconciler pass', async () => {
    const env = await t.client.environments.create({ name: 'hostile-capture-kill', provider: 'docker', config: { image: TEST_IMAGE } });
    const { session } = await t.client.customImages.startSetup(env.id);
    // Enough written that the commit takes a moment.
    await t.client.customImages.exec(session.id, {
      command: ['sh', '-c', 'dd if=/dev/urandom of=/opt/blob bs=1M count=768 status=none'],
      timeoutMs: 120_000,
    });
    const leaseId = (await t.server.store.repos.setupSessions.get(session.id))!.providerLeaseId!;
    const containerId = leaseId.split('@')[0]!;

    // The engine finishes a commit whose client died, and the server's upkeep unpauses what it froze.
    const committed = engineEvent(docker, { container: [containerId], event: ['commit'] }, async () => undefined);
    const unpaused = engineEvent(docker, { container: [containerId], event: ['unpause'] }, async () => undefined);
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, t.dataDir, leaseId, session.id, env.id], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const killedAt = await new Promise<string>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        // The first `committing` report comes before the request is sent; a later one (the
        // progress ticker's) comes while the engine is committing.
        const [, phase, fraction] = line.split(' ');
        if (phase === 'committing' && Number(fraction) > 0.05) {
          child.kill('SIGKILL');
          resolve(phase);
        }
        if (line === 'captured') reject(new Error('the capture finished before it could be killed'));
      });
      child.on('exit', (code, signal) => {
        if (signal !== 'SIGKILL') reject(new Error(`the capturing process ended on its own (${code ?? signal})`));
      });
    });
    expect(killedAt).toBe('committing');
    await committed;
    await unpaused;
    expect(await docker.listImages({ filters: { label: [`${DOCKER_LABELS.capturedFrom}=${session.id}`] } })).toHaveLength(1);

    // The operator gives up on the setup; the next pass removes the image no custom image records.
    await t.client.customImages.cancel(session.id);
    await t.server.reconciler.runOnce();
    expect(await docker.listImages({ filters: { label: [`${DOCKER_LABELS.capturedFrom}=${session.id}`] } })).toEqual([]);
    expect(await docker.listContainers({ all: true, filters: { label: [`${DOCKER_LABELS.setup}=${session.id}`] } })).toEqual([]);
    expect(await t.client.customImages.history(env.id)).toEqual([]);
  });
});
