import { collectExecOutput, isProviderError } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { BASE_CONFIG, localTest, requireLocal, type TempProvider, tempProvider } from './support.ts';

/**
 * The exec agent (ADR 0030) against a hostile sandbox: whatever runs inside may look for it, try
 * to reach its pipes to the host, or kill it. Execs must keep working and keep their semantics.
 */
describe('local provider exec agent', () => {
  let run = false;
  let temp: TempProvider;
  let sandbox: string;

  beforeAll(async () => {
    run = await requireLocal('exec-agent');
    if (!run) return;
    temp = await tempProvider();
    sandbox = (await temp.provider.create({ sandboxId: 'agent', environmentId: 'env', config: BASE_CONFIG })).instanceId;
  }, 60_000);

  afterAll(async () => {
    delete process.env.SANDCAST_LOCAL_EXEC_AGENT;
    if (run) await temp.dispose();
  }, 60_000);

  const test = localTest(() => run);
  const sh = (script: string, extra: { stdin?: string | Buffer; timeoutMs?: number } = {}) =>
    temp.provider.exec(sandbox, { command: ['sh', '-c', script], ...extra });
  /** The agent's pid inside the sandbox, found the way sandbox code would find it. */
  const FIND_AGENT = 'for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = sandcast-agent ] && echo "$d" | cut -d/ -f3; done';
  /** Which program started the command: the agent, or (the old path) bwrap outside the pid namespace (pid 0). */
  const parent = async () => (await sh('cat /proc/$PPID/comm 2>/dev/null || echo "pid $PPID"')).stdout.trim();

  test('execs run through the agent, and the old way when it is switched off', async () => {
    expect(await parent()).toBe('sandcast-agent');
    process.env.SANDCAST_LOCAL_EXEC_AGENT = 'off';
    try {
      expect(await parent()).toBe('pid 0');
    } finally {
      delete process.env.SANDCAST_LOCAL_EXEC_AGENT;
    }
  });

  test('sandbox code cannot open the agent’s descriptors or memory: it is not dumpable', async () => {
    const agent = (await sh(FIND_AGENT)).stdout.trim();
    expect(agent).toMatch(/^\d+$/);
    const probe = await sh(
      // (Listing the fd directory shows numbers only; following or opening an entry is what matters.)
      `readlink /proc/${agent}/fd/0 >/dev/null 2>&1 && echo linked; timeout 2 cat /proc/${agent}/fd/0 >/dev/null 2>&1 && echo read; ` +
        `echo x 2>/dev/null > /proc/${agent}/fd/1 && echo wrote; cat /proc/${agent}/environ >/dev/null 2>&1 && echo environ; ` +
        `cat /proc/${agent}/mem >/dev/null 2>&1 && echo mem; echo done`,
    );
    expect(probe.stdout).toBe('done\n');
    // The same probes do work on a process of the sandbox's own: the test can tell.
    const own = await sh('sleep 30 & p=$!; readlink /proc/$p/fd/1 >/dev/null && echo linked; kill $p');
    expect(own.stdout).toBe('linked\n');
  });

  test('a command sees only its own stdio, none of the agent’s control pipes, and neither do its children', async () => {
    const own = await sh('ls /proc/self/fd');
    expect(own.stdout.split('\n').filter(Boolean).sort()).toEqual(['0', '1', '2', '3']); // 3: ls's own listing
    const child = await sh('sh -c "ls /proc/self/fd" | cat');
    expect(child.stdout.split('\n').filter(Boolean).sort()).toEqual(['0', '1', '2', '3']);
    // Its stdio are the agent's per-command pipes, not the pipes to the host.
    const links = await sh('readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2');
    expect(links.stdout.split('\n').filter(Boolean)).toHaveLength(3);
    expect(await parent()).toBe('sandcast-agent');
  });

  test('killed from inside: the exec in flight fails clearly and is stopped, the next exec works, the agent comes back', async () => {
    const secs = 1500 + Math.floor(Math.random() * 500);
    const running = await temp.provider.execStream(sandbox, { command: ['sh', '-c', `echo up; sleep ${secs}`] });
    const collected = collectExecOutput(running).catch((error: unknown) => error);
    // The killer is itself an exec through the agent: it fails the same way.
    const killer = await sh(`kill -9 $(${FIND_AGENT})`).catch((error: unknown) => error);
    expect(isProviderError(killer) && killer.message).toMatch(/exec agent went away/);
    const inFlight = await collected;
    expect(isProviderError(inFlight) && inFlight.message).toMatch(/exec agent went away.*the command was stopped/);
    // The next exec works, and nothing of the interrupted command is left.
    const after = await sh(
      `for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done | grep -c "^sleep ${secs}" || true`,
    );
    expect(after).toMatchObject({ exitCode: 0, stdout: '0\n' });
    expect(await parent()).toBe('sandcast-agent');
    expect((await sh(FIND_AGENT)).stdout.trim()).toMatch(/^\d+$/);
  });

  test('a command that leaves its process group is still killed with its exec on timeout', async () => {
    const secs = 2100 + Math.floor(Math.random() * 500);
    const result = await sh(`setsid sleep ${secs} & sleep ${secs}`, { timeoutMs: 500 });
    expect(result.timedOut).toBe(true);
    const after = await sh(
      `for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done | grep -c "^sleep ${secs}" || true`,
    );
    expect(after.stdout).toBe('0\n');
  });

  test('stdin larger than the agent’s window arrives whole; output of many frames too', async () => {
    const input = Buffer.alloc(3 * 1024 * 1024 + 17, 'a');
    const counted = await sh('wc -c', { stdin: input });
    expect(counted.stdout.trim()).toBe(String(input.length));
    const echoed = await temp.provider.exec(sandbox, { command: ['cat'], stdin: input, maxOutputBytes: 8 * 1024 * 1024 });
    expect(echoed.stdout.length).toBe(input.length);
    expect(echoed.totalBytes.stdout).toBe(input.length);
  });

  test('many arguments go through the agent; a request larger than its frame limit runs the old way, the same', async () => {
    const script = 'echo "$# $(cat /proc/$PPID/comm 2>/dev/null || echo "pid $PPID")"';
    // Both within bwrap's own cap of 9000 arguments, which the old path keeps.
    const many = Array.from({ length: 5_000 }, (_, i) => `argument-${i}-${'x'.repeat(80)}`);
    const through = await temp.provider.exec(sandbox, { command: ['sh', '-c', script, 'sh', ...many] });
    expect(through.stdout).toBe('5000 sandcast-agent\n');
    const large = Array.from({ length: 2_000 }, (_, i) => `argument-${i}-${'x'.repeat(600)}`);
    const old = await temp.provider.exec(sandbox, { command: ['sh', '-c', script, 'sh', ...large] });
    expect(old.stderr + old.stdout).toBe('2000 pid 0\n');
  });

  test('execs in parallel keep their output apart', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => sh(`for n in 1 2 3; do echo ${i}-$n; echo e${i} >&2; done; exit ${i}`)),
    );
    results.forEach((result, i) => {
      expect(result.exitCode).toBe(i);
      expect(result.stdout).toBe(`${i}-1\n${i}-2\n${i}-3\n`);
      expect(result.stderr).toBe(`e${i}\ne${i}\ne${i}\n`);
    });
  });
});
