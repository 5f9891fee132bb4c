import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PtyStream } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { localConfigSchema } from '../src/index.ts';
import { attackScript, DOCKER_DEFAULT_CAPS, escapesIn, KEPT_CAPABILITIES, restoreSysctls, snapshotSysctls } from '../src/testing.ts';
import { BASE_CONFIG, localTest, requireLocal, type TempProvider, tempProvider } from './support.ts';

/** Issue 10 findings 1, 7, 9 and 12 on the provider itself; the same attacks through the API are in tests/hostile. */
describe('local provider containment', () => {
  let run = false;
  let temp: TempProvider;
  let sandbox: string;
  const warnings: string[] = [];

  beforeAll(async () => {
    run = await requireLocal('containment');
    if (!run) return;
    temp = await tempProvider({ onWarning: (message) => warnings.push(message) });
    sandbox = (await temp.provider.create({ sandboxId: 'contain', environmentId: 'env', config: { ...BASE_CONFIG, diskMb: 64 } }))
      .instanceId;
  }, 60_000);

  afterAll(async () => {
    if (run) await temp.dispose();
  }, 60_000);

  const test = localTest(() => run);
  const sh = (script: string, id = sandbox) => temp.provider.exec(id, { command: ['sh', '-c', script] });
  const record = async (id: string) =>
    JSON.parse(await readFile(join(temp.dataDir, 'providers/local/instances', id, 'instance.json'), 'utf8')) as {
      initPid: number;
      initOomScoreAdj: number;
    };

  /** Inspects until the sandbox is no longer running (the kernel tears a pid namespace down asynchronously), at most ~5 s. */
  const untilStopped = async (id: string) => {
    let info = await temp.provider.inspect(id);
    for (let attempt = 0; attempt < 250 && info.status === 'running'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      info = await temp.provider.inspect(id);
    }
    return info;
  };

  const ptyOutput = async (pty: PtyStream) => {
    let text = '';
    pty.onData((chunk) => {
      text += chunk.toString('utf8');
    });
    await new Promise<void>((resolve) => pty.onExit(() => resolve()));
    return text;
  };

  test('the kept capabilities are within Docker default set', async () => {
    for (const cap of KEPT_CAPABILITIES) expect(DOCKER_DEFAULT_CAPS).toContain(cap);
  });

  test('exec: host sysctls cannot be written, masks cannot be lifted, caps are the kept set, no_new_privs and seccomp', async () => {
    const before = await snapshotSysctls();
    const result = await sh(attackScript());
    const changed = await restoreSysctls(before);
    expect(changed).toEqual([]);
    expect(escapesIn(result.stdout, KEPT_CAPABILITIES), result.stdout).toEqual([]);
  });

  test('PTY: the same attack is contained', async () => {
    const before = await snapshotSysctls();
    const pty = await temp.provider.openPty(sandbox, { cols: 200, rows: 50, command: ['sh', '-c', attackScript()] });
    const output = (await ptyOutput(pty)).replaceAll('\r', '');
    expect(await restoreSysctls(before)).toEqual([]);
    expect(escapesIn(output, KEPT_CAPABILITIES), output).toEqual([]);
  });

  test('the init itself runs with the kept caps, no_new_privs and seccomp', async () => {
    const status = await sh('grep -E "^(Name|CapEff|NoNewPrivs|Seccomp):" /proc/1/status');
    expect(status.stdout).toMatch(/Name:\s*sandcast-init/);
    // Only the status checks apply (the init attempts no writes).
    expect(escapesIn(status.stdout, KEPT_CAPABILITIES).filter((e) => !e.endsWith('no refusal seen'))).toEqual([]);
  });

  test('read-only /proc/sys still shows the sandbox its own hostname and network', async () => {
    const seen = await sh('cat /proc/sys/kernel/hostname; hostname; ls /proc/sys/net/ipv4/conf');
    const lines = seen.stdout.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['sandbox', 'sandbox']);
    expect(lines.slice(2).sort()).toEqual(['all', 'default', 'lo']);
  });

  test('a sandbox is ready when create returns: hostname set, pid 1 is the reaper (no race with the first exec)', async () => {
    for (let i = 0; i < 4; i++) {
      const { instanceId } = await temp.provider.create({ sandboxId: `ready-${i}`, environmentId: 'env', config: BASE_CONFIG });
      const seen = await sh('hostname; cat /proc/1/comm', instanceId);
      expect(seen.stdout).toBe('sandbox\nsandcast-init\n');
      await temp.provider.destroy(instanceId);
    }
  });

  test('orphans are reaped: no zombies after a double-forking process exits many children', async () => {
    const spawned = await sh('i=0; while [ $i -lt 40 ]; do (sh -c "true" & sh -c "exit 3" &) ; i=$((i+1)); done; echo spawned');
    expect(spawned.stdout).toBe('spawned\n');
    const zombies = 'for f in /proc/[0-9]*/status; do grep -q "^State:.*Z" "$f" 2>/dev/null && echo "$f"; done | wc -l';
    let count = -1;
    // Reaping follows SIGCHLD; poll the observable state, bounded.
    for (let attempt = 0; attempt < 50 && count !== 0; attempt++) count = Number((await sh(zombies)).stdout.trim());
    expect(count).toBe(0);
  });

  test('oom_score_adj: the init holds -1000, or the failure was reported and execs score above it', async () => {
    const { initOomScoreAdj } = await record(sandbox);
    const seen = await sh('cat /proc/1/oom_score_adj /proc/self/oom_score_adj');
    const [init, self] = seen.stdout.trim().split('\n').map(Number);
    expect(init).toBe(initOomScoreAdj);
    const capBnd = BigInt(`0x${/CapBnd:\s*([0-9a-f]+)/.exec(await readFile('/proc/self/status', 'utf8'))![1]}`);
    if (capBnd & (1n << 24n)) {
      // CAP_SYS_RESOURCE: the host can protect the init.
      expect(init).toBe(-1000);
      expect(warnings).toEqual([]);
    } else {
      expect(init).toBe(0);
      expect(self).toBe(500);
      expect(warnings.join('\n')).toMatch(/oom_score_adj stays 0.*CAP_SYS_RESOURCE/);
      const log = await readFile(join(temp.dataDir, 'providers/local/instances', sandbox, 'init.log'), 'utf8');
      expect(log).toMatch(/oom_score_adj -1000 refused/);
    }
  });

  test('SIGTERM to the init is forwarded and the sandbox stops', async () => {
    const { instanceId } = await temp.provider.create({ sandboxId: 'term', environmentId: 'env', config: BASE_CONFIG });
    const { initPid } = await record(instanceId);
    process.kill(initPid, 'SIGTERM');
    expect((await untilStopped(instanceId)).status).toBe('missing');
    await temp.provider.destroy(instanceId);
  });

  test('a dead init: inspect says missing with the reason, exec is a clear provider error, never the host hostname', async () => {
    const { instanceId } = await temp.provider.create({ sandboxId: 'dies', environmentId: 'env', config: BASE_CONFIG });
    expect((await sh('hostname', instanceId)).stdout).toBe('sandbox\n');
    const { initPid } = await record(instanceId);
    process.kill(initPid, 'SIGKILL');
    const info = await untilStopped(instanceId);
    expect(info).toMatchObject({ status: 'missing', detail: expect.stringMatching(/init \(pid \d+\) is gone/) });
    const error = await temp.provider.exec(instanceId, { command: ['hostname'] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'not_found', message: expect.stringMatching(/init .* is gone|has stopped/) });
    await temp.provider.destroy(instanceId);
  });

  test('a command running when the init dies ends in a provider error, not in output of the runtime', async () => {
    const { instanceId } = await temp.provider.create({ sandboxId: 'dies-mid', environmentId: 'env', config: BASE_CONFIG });
    const { initPid } = await record(instanceId);
    const running = temp.provider.exec(instanceId, { command: ['sh', '-c', 'touch /tmp/started; exec sleep 30'] }).catch((e: unknown) => e);
    let started = false;
    for (let attempt = 0; attempt < 100 && !started; attempt++) started = (await sh('test -e /tmp/started', instanceId)).exitCode === 0;
    expect(started).toBe(true);
    process.kill(initPid, 'SIGKILL');
    expect(await running).toMatchObject({ code: 'not_found', message: expect.stringMatching(/stopped: its init \(pid \d+\) is gone/) });
    await temp.provider.destroy(instanceId);
  });

  test('disk: a file within diskMb is written; writing past it fails with ENOSPC; the host holds at most diskMb', async () => {
    expect((await sh('dd if=/dev/zero of=/workspace/within bs=1M count=16 2>&1 && echo ok')).stdout).toMatch(/ok\n$/);
    const past = await sh('dd if=/dev/zero of=/var/past bs=1M count=200 2>&1; echo "exit=$?"');
    expect(past.stdout).toMatch(/No space left on device/);
    expect(past.stdout).toMatch(/exit=1/);
    // In the disk store where files can be cloned (ADR 0031), else in the instance's own dir.
    const stored = join(temp.dataDir, 'providers/local/disks', `${sandbox}.img`);
    const image = existsSync(stored) ? stored : join(temp.dataDir, 'providers/local/instances', sandbox, 'disk.img');
    expect((await stat(image)).blocks * 512).toBeLessThanOrEqual(64 * 1024 * 1024);
    // The sandbox is still usable once space is freed.
    expect((await sh('rm /var/past && echo freed')).stdout).toBe('freed\n');
  });

  test('capture after writes: the layer is a plain directory in the image store, and boots', async () => {
    const lease = await temp.provider.startInteractiveSetup!({
      setupSessionId: 'disk-capture',
      environmentId: 'env',
      config: { ...BASE_CONFIG, diskMb: 64 },
      source: null,
      ttlSeconds: 600,
    });
    const wrote = await temp.provider.exec(lease.leaseId, {
      command: [
        'sh',
        '-c',
        'mkdir -p /opt/tool && echo built > /opt/tool/out && rm -rf /etc/motd && echo usr > /usr/local/bin/sandcast-mark',
      ],
    });
    expect(wrote.exitCode).toBe(0);
    const ref = await temp.provider.captureTemplate!({ leaseId: lease.leaseId, setupSessionId: 'disk-capture', environmentId: 'env' });
    const image = await temp.provider.images.get(ref.ref);
    const layerDir = join(temp.dataDir, 'providers/local/layers', image!.layers.at(-1)!.id);
    expect((await stat(layerDir)).isDirectory()).toBe(true);
    expect(await readFile(join(layerDir, 'opt/tool/out'), 'utf8')).toBe('built\n');
    expect(await readFile(join(layerDir, 'usr/local/bin/sandcast-mark'), 'utf8')).toBe('usr\n');
    expect(await readdir(layerDir)).not.toContain('lost+found');
    const booted = await temp.provider.create({ sandboxId: 'from-capture', environmentId: 'env', config: BASE_CONFIG, template: ref });
    const seen = await sh('cat /opt/tool/out /usr/local/bin/sandcast-mark; test -e /etc/motd && echo motd', booted.instanceId);
    expect(seen.stdout).toBe('built\nusr\n');
    await temp.provider.destroy(booted.instanceId);
  });

  test('a server running with umask 077 still gives sandboxes a usable /, /usr and workdir', async () => {
    const previous = process.umask(0o077);
    try {
      const { instanceId } = await temp.provider.create({
        sandboxId: 'umask',
        environmentId: 'env',
        config: { ...BASE_CONFIG, workdir: '/srv/app' },
      });
      const seen = await sh(
        'stat -c "%a %n" / /usr /srv/app; su nobody -s /bin/sh -c "test -x /usr/bin/env && echo nobody-ok" 2>&1; umask',
        instanceId,
      );
      // Files the sandbox makes are not private to root either: its processes start with umask 022.
      expect(seen.stdout).toBe('755 /\n755 /usr\n755 /srv/app\nnobody-ok\n0022\n');
      await temp.provider.destroy(instanceId);
    } finally {
      process.umask(previous);
    }
  });

  test('workdir: ".." is refused by the config schema with a message', async () => {
    const parsed = localConfigSchema.safeParse({ workdir: '/../../../../tmp/x' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/^must not contain "\.\." segments; give the directory as an absolute path/);
    expect(localConfigSchema.safeParse({ workdir: '/work\0dir' }).success).toBe(false);
  });

  test('workdir and exec cwd never reach the host, whatever the provider is given', async () => {
    const marker = `/tmp/sandcast-escape-${process.pid}`;
    const created = await temp.provider
      .create({ sandboxId: 'escape', environmentId: 'env', config: { ...BASE_CONFIG, workdir: `/../../../..${marker}` } })
      .catch((e: unknown) => e);
    expect(created).toMatchObject({ code: 'invalid_config' });
    expect(existsSync(marker)).toBe(false);
    const ran = await temp.provider.exec(sandbox, { command: ['pwd'], cwd: `/../../../..${marker}-cwd` });
    expect(existsSync(`${marker}-cwd`)).toBe(false);
    expect(ran.stdout).not.toContain('..');
    const nul = await temp.provider.exec(sandbox, { command: ['pwd'], cwd: '/tmp/\0x' }).catch((e: unknown) => e);
    expect(nul).toMatchObject({ code: 'invalid_config', message: expect.stringMatching(/NUL/) });
  });
});
