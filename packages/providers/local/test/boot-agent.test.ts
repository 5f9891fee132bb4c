import { readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { BASE_CONFIG, localTest, requireLocal, type TempProvider, tempProvider } from './support.ts';

/**
 * The exec agent a sandbox's init forks at start (ADR 0034), seen from the host: it is there and
 * ready when create (or start, or fork) returns, it sits in its own cgroup with only its control
 * socket, and it gives commands what the old path gave them.
 */
describe('local provider: the agent the init forks', () => {
  let run = false;
  let temp: TempProvider;

  beforeAll(async () => {
    run = await requireLocal('boot-agent');
    if (run) temp = await tempProvider();
  }, 60_000);

  afterAll(async () => {
    delete process.env.SANDCAST_LOCAL_EXEC_AGENT;
    if (run) await temp.dispose();
  }, 60_000);

  const test = localTest(() => run);
  const record = async (id: string) =>
    JSON.parse(await readFile(join(temp.dataDir, 'providers/local/instances', id, 'instance.json'), 'utf8')) as { initPid: number };
  /** The init's children on the host: before any exec, the agent is all there is. */
  const initChildren = async (id: string) => {
    const { initPid } = await record(id);
    const text = await readFile(`/proc/${initPid}/task/${initPid}/children`, 'utf8');
    return text.trim().split(/\s+/).filter(Boolean).map(Number);
  };
  const comm = async (pid: number) => (await readFile(`/proc/${pid}/comm`, 'utf8')).trim();
  const create = async (name: string) =>
    (await temp.provider.create({ sandboxId: name, environmentId: 'env', config: BASE_CONFIG })).instanceId;

  test('the agent runs, in its own cgroup, when create returns: before any exec', async () => {
    const id = await create('boot-1');
    const children = await initChildren(id);
    expect(children).toHaveLength(1);
    const agent = children[0]!;
    expect(await comm(agent)).toBe('sandcast-agent');
    // Moved out of the init's group into the agent's (cgroup v2: one line; v1: the freezer's).
    const groups = await readFile(`/proc/${agent}/cgroup`, 'utf8');
    expect(groups).toMatch(new RegExp(`/${id}/agent$`, 'm'));
    expect(groups).not.toMatch(new RegExp(`/${id}/init$`, 'm'));
    // The first exec goes through it: no agent is started for it.
    const first = await temp.provider.exec(id, { command: ['sh', '-c', 'cat /proc/$PPID/comm'] });
    expect(first.stdout).toBe('sandcast-agent\n');
    expect(await initChildren(id)).toContain(agent);
  });

  test('the agent holds its control socket (as stdin and stdout), its log and its own descriptors: nothing of the init’s', async () => {
    const id = await create('boot-2');
    const [agent] = await initChildren(id);
    const fds = await readdir(`/proc/${agent}/fd`);
    const links = await Promise.all(fds.map(async (fd) => [fd, await readlink(`/proc/${agent}/fd/${fd}`)] as const));
    const byFd = Object.fromEntries(links);
    expect(byFd['0']).toMatch(/^socket:\[\d+\]$/);
    expect(byFd['1']).toBe(byFd['0']);
    expect(byFd['2']).toMatch(/init\.log$/);
    for (const [, target] of links) {
      expect(target).not.toMatch(/hold|seccomp|pipe:/);
    }
  });

  test('commands get the oom_score_adj the old path gives them', async () => {
    const id = await create('boot-3');
    const through = await temp.provider.exec(id, { command: ['sh', '-c', 'cat /proc/self/oom_score_adj; cat /proc/$PPID/comm'] });
    process.env.SANDCAST_LOCAL_EXEC_AGENT = 'off';
    try {
      const old = await temp.provider.exec(id, { command: ['sh', '-c', 'cat /proc/self/oom_score_adj'] });
      expect(through.stdout).toBe(`${old.stdout.trim()}\nsandcast-agent\n`);
    } finally {
      delete process.env.SANDCAST_LOCAL_EXEC_AGENT;
    }
  });

  test('a sandbox started again, and a fork, have their agent when the call returns', async () => {
    const id = await create('boot-4');
    await temp.provider.stop?.(id);
    await temp.provider.start?.(id);
    expect(await Promise.all((await initChildren(id)).map(comm))).toEqual(['sandcast-agent']);
    const [fork] = await temp.provider.fork!(id, [{ sandboxId: 'boot-4-fork' }]);
    expect(await Promise.all((await initChildren(fork!.instanceId)).map(comm))).toEqual(['sandcast-agent']);
    expect((await temp.provider.exec(fork!.instanceId, { command: ['sh', '-c', 'cat /proc/$PPID/comm'] })).stdout).toBe('sandcast-agent\n');
  });

  test('with agents off, the init forks none and execs run the old way', async () => {
    process.env.SANDCAST_LOCAL_EXEC_AGENT = 'off';
    try {
      const id = await create('boot-5');
      expect(await initChildren(id)).toEqual([]);
      expect((await temp.provider.exec(id, { command: ['sh', '-c', 'echo "pid $PPID"'] })).stdout).toBe('pid 0\n');
    } finally {
      delete process.env.SANDCAST_LOCAL_EXEC_AGENT;
    }
  });
});
