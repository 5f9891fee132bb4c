import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { BASE_CONFIG, localTest, requireLocal, type TempProvider, tempProvider } from './support.ts';

describe('local provider isolation', () => {
  let run = false;
  let temp: TempProvider;
  let sandbox: string;
  let server: Server;
  let port = 0;

  beforeAll(async () => {
    run = await requireLocal('isolation');
    if (!run) return;
    temp = await tempProvider();
    sandbox = (
      await temp.provider.create({ sandboxId: 'iso', environmentId: 'env', config: { ...BASE_CONFIG, pidsLimit: 64, memoryMb: 64 } })
    ).instanceId;
    server = createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  }, 60_000);

  afterAll(async () => {
    server?.close();
    if (run) await temp.dispose();
  }, 60_000);

  const test = localTest(() => run);
  const sh = (script: string, timeoutMs?: number) => temp.provider.exec(sandbox, { command: ['sh', '-c', script], timeoutMs });

  test('host processes are invisible', async () => {
    const result = await sh('for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done');
    expect(result.stdout).not.toMatch(/vitest|node/);
    const count = await sh('ls -d /proc/[0-9]* | wc -l');
    expect(Number(count.stdout.trim())).toBeLessThan(10);
  });

  test('privileges: no CAP_SYS_ADMIN, no_new_privs, seccomp filter on', async () => {
    const status = await sh('grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status');
    const capEff = BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(status.stdout)![1]}`);
    expect(capEff & (1n << 21n)).toBe(0n); // CAP_SYS_ADMIN
    expect(capEff & (1n << 27n)).toBe(0n); // CAP_MKNOD
    expect(status.stdout).toMatch(/NoNewPrivs:\s*1/);
    expect(status.stdout).toMatch(/Seccomp:\s*2/);
  });

  test('writes land in the sandbox, never in a lower layer or on the host', async () => {
    const marker = `sandcast-probe-${process.pid}`;
    const wrote = await sh(`echo x > /usr/bin/${marker} && echo x > /etc/${marker} && echo x > /tmp/${marker} && cat /usr/bin/${marker}`);
    expect(wrote.exitCode).toBe(0);
    expect(existsSync(`/usr/bin/${marker}`)).toBe(false);
    expect(existsSync(`/tmp/${marker}`)).toBe(false);
    const image = await temp.provider.images.get('host');
    const base = join(temp.dataDir, 'providers/local/layers', image!.layers[0]!.id);
    expect(existsSync(join(base, 'etc', marker))).toBe(false);
    expect((await sh('echo 1 > /proc/sysrq-trigger')).exitCode).not.toBe(0);
    expect((await sh(`test -e ${temp.dataDir}`)).exitCode).not.toBe(0);
  });

  test('mounting and new namespaces are refused', async () => {
    expect((await sh('mount -t tmpfs none /mnt')).exitCode).not.toBe(0);
    expect((await sh('unshare -U true')).exitCode).not.toBe(0);
    expect((await sh('unshare -m true')).exitCode).not.toBe(0);
    expect((await sh('mknod /tmp/disk b 8 0')).exitCode).not.toBe(0);
  });

  test('network: loopback only by default; the host network when the config allows it', async () => {
    const denied = await sh(`bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3'`, 5000);
    expect(denied.exitCode).not.toBe(0);
    expect((await sh('cat /proc/net/dev')).stdout).not.toMatch(/eth|ens|veth/);
    const open = await temp.provider.create({ sandboxId: 'iso-net', environmentId: 'env', config: { ...BASE_CONFIG, network: 'host' } });
    const allowed = await temp.provider.exec(open.instanceId, {
      command: ['bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`],
      timeoutMs: 5000,
    });
    expect(allowed.stdout).toBe('hello from the host\n');
    await temp.provider.destroy(open.instanceId);
  });

  test('a fork bomb is contained by the pids limit', async () => {
    const bomb = await sh('i=0; while [ $i -lt 300 ]; do sleep 30 & i=$((i+1)); done; ls -d /proc/[0-9]* | wc -l', 8000);
    expect(bomb.stderr).toMatch(/fork|Resource temporarily unavailable|Cannot/i);
    // Regression: under a tight memory limit the OOM killer once chose the sandbox's init.
    expect((await temp.provider.inspect(sandbox)).status).toBe('running');
    const after = await sh('echo alive');
    expect(after.stdout).toBe('alive\n');
  });

  test('a memory hog is killed by the memory limit, the sandbox survives', async () => {
    const hog = await sh('head -c 400000000 /dev/zero | tail -n 1 > /dev/null', 30_000);
    expect(hog.exitCode).not.toBe(0);
    expect(hog.timedOut).toBe(false);
    expect((await sh('echo alive')).stdout).toBe('alive\n');
  });
});
