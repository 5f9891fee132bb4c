import { EventEmitter } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { ExecProcess, ExecRequest } from '@sandcast/provider-sdk';
import type { Cgroups } from './cgroups.ts';
import { localError } from './errors.ts';
import { ExecAgent } from './exec-agent.ts';
import { AGENT_GROUP, type InstanceRecord, type Instances } from './instances.ts';
import { newId } from './layout.ts';
import { agentBinary } from './native-init.ts';
import { innermostPid, sleep } from './proc.ts';
import { AGENT_PATH, type BootedAgent, spawnInSandbox } from './runtime.ts';
import { awaitProcess, type RawExecResult, streamProcess } from './sandbox-io.ts';
import type { HostChild } from './spawner.ts';

/**
 * How commands run in a sandbox. Execs go through the sandbox's exec agent (ADR 0030) when it is
 * up, and the old way otherwise — a new `sh → nsenter → bwrap` per command, which is what file
 * operations, workspace streams and terminals always use. The agent is forked by the sandbox's
 * init at start (ADR 0034); one that went away (or one of a sandbox a previous server started) is
 * started again the old way. Either
 * way each command gets its own child cgroup, killed as a whole on timeout or `kill()`.
 */

const DEFAULT_TIMEOUT_MS = 60_000;
/** How long a start waits for the ready frame of the agent its init forked (it is usually there already). */
const ADOPT_TIMEOUT_MS = 2_000;
/** How soon after a failed start the agent is tried again (a sandbox that keeps killing it gets the old path). */
const RESTART_BACKOFF_MS = 1_000;

export interface ExecDeps {
  ready: () => Promise<{ cgroups: Cgroups; instances: Instances }>;
}

type RunRequest = Pick<ExecRequest, 'command' | 'cwd' | 'env' | 'stdin' | 'timeoutMs'>;

interface AgentEntry {
  initStartTime: number;
  agent: ExecAgent | null;
  starting: Promise<ExecAgent | null> | null;
  failedAt: number;
}

/** How long an exec whose agent went away waits to see whether the sandbox's init is going too. */
const AGENT_GONE_GRACE_MS = 2000;

export function createExecPlumbing(deps: ExecDeps) {
  const agents = new Map<string, AgentEntry>();
  // SANDCAST_LOCAL_EXEC_AGENT=off runs every exec the old way (read per call: the benchmarks compare both).
  const agentsOff = () => process.env.SANDCAST_LOCAL_EXEC_AGENT === 'off';

  const startAgent = async (record: InstanceRecord, entry: AgentEntry): Promise<ExecAgent | null> => {
    const binary = await agentBinary();
    if (!binary) return null;
    const { cgroups, instances } = await deps.ready();
    // A previous server's agent (it dies with its spawner) must not share the group's pid lookup.
    await cgroups.kill(record.id, AGENT_GROUP);
    const procsFiles = await cgroups.createChild(record.id, AGENT_GROUP);
    const spec = instances.spawnSpec(record, { command: [AGENT_PATH], cwd: '/', procsFiles, newSession: true });
    const child = await spawnInSandbox({ ...spec, binds: [{ host: binary, inside: AGENT_PATH }] });
    const agent = new ExecAgent(child, procsFiles, () => {
      child.kill('SIGKILL');
      void cgroups.kill(record.id, AGENT_GROUP).catch(() => undefined);
    });
    const timer = setTimeout(() => agent.fail('the exec agent did not report ready'), 10_000);
    try {
      await agent.ready;
    } finally {
      clearTimeout(timer);
    }
    if (entry.agent === null && agents.get(record.id) === entry) return agent;
    // The sandbox was destroyed or restarted meanwhile.
    agent.close();
    return null;
  };

  /** The sandbox's entry, a new one when the sandbox started again since (its old agent closed). */
  const entryOf = (record: InstanceRecord): AgentEntry => {
    let entry = agents.get(record.id);
    if (!entry || entry.initStartTime !== record.initStartTime) {
      entry?.agent?.close();
      entry = { initStartTime: record.initStartTime, agent: null, starting: null, failedAt: 0 };
      agents.set(record.id, entry);
    }
    return entry;
  };

  /**
   * The agent a start's init forked (ADR 0034), made ready for commands: its host pid is found
   * among the init group's processes (the init and the agent are all there is: nothing else has
   * run), it is moved into the agent group, given the exec score when the init holds none, and
   * its ready frame awaited. Throws when any of it fails.
   */
  const takeOver = async (record: InstanceRecord, booted: BootedAgent): Promise<ExecAgent> => {
    const { cgroups, instances } = await deps.ready();
    const initProcs = cgroups.childProcs(record.id, 'init');
    const agentProcs = cgroups.childProcs(record.id, AGENT_GROUP);
    const listed = (await readFile(initProcs.at(-1)!, 'utf8').catch(() => '')).split('\n').filter((line) => /^\d+$/.test(line));
    let hostPid: number | null = null;
    for (const pid of listed.map(Number)) if (pid !== record.initPid && (await innermostPid(pid)) === booted.innerPid) hostPid = pid;
    if (hostPid === null) throw new Error('the agent forked by the init is not in its cgroup');
    for (const file of agentProcs.filter((f) => !initProcs.includes(f))) await writeFile(file, String(hostPid));
    const score = instances.execOomScore(record);
    if (score !== null) await writeFile(`/proc/${hostPid}/oom_score_adj`, String(score));
    const { socket } = booted;
    const channel = Object.assign(new EventEmitter(), { stdin: socket, stdout: socket, stderr: null, unref: () => undefined });
    const agent = new ExecAgent(channel, agentProcs, () => {
      socket.destroy();
      void cgroups.kill(record.id, AGENT_GROUP).catch(() => undefined);
    });
    const timer = setTimeout(() => agent.fail('the exec agent did not report ready'), ADOPT_TIMEOUT_MS);
    try {
      await agent.ready;
    } finally {
      clearTimeout(timer);
    }
    return agent;
  };

  /** Takes over a booted agent, or (none, or it failed) starts one the old way in the background; never throws. */
  const adopt = async (record: InstanceRecord, booted: BootedAgent | null): Promise<void> => {
    if (agentsOff()) return void booted?.socket.destroy();
    const entry = entryOf(record);
    const agent = booted
      ? await takeOver(record, booted).catch(() => {
          booted.socket.destroy();
          return null;
        })
      : null;
    if (agent && agents.get(record.id) === entry && !entry.agent?.alive) {
      entry.agent = agent;
      return;
    }
    agent?.close();
    warm(record);
  };

  /** Starts the sandbox's agent in the background when it has none (or its agent is gone). */
  const warm = (record: InstanceRecord): AgentEntry | null => {
    if (agentsOff()) return null;
    const entry = entryOf(record);
    if (entry.agent && !entry.agent.alive) entry.agent = null;
    if (entry.agent || entry.starting || Date.now() - entry.failedAt < RESTART_BACKOFF_MS) return entry;
    const current = entry;
    current.starting = startAgent(record, current)
      .catch(() => null)
      .then((agent) => {
        current.starting = null;
        if (agent) current.agent = agent;
        else current.failedAt = Date.now();
        return agent;
      });
    return entry;
  };

  /** The agent to run an exec through: a live one, or one starting (awaited); null means the old path. */
  const agentFor = async (record: InstanceRecord): Promise<ExecAgent | null> => {
    const entry = warm(record);
    if (!entry) return null;
    if (entry.agent?.alive) return entry.agent;
    return (await entry.starting) ?? null;
  };

  /** Runs a command in its own child cgroup and removes the group (when empty) afterwards. Old path. */
  const runIn = async (record: InstanceRecord, request: RunRequest): Promise<RawExecResult> => {
    if (request.command.length === 0) throw localError('invalid_config', 'exec needs a command');
    const { cgroups, instances } = await deps.ready();
    const group = `x${newId()}`;
    const procsFiles = await cgroups.createChild(record.id, group);
    try {
      const child = await spawnInSandbox(instances.spawnSpec(record, { ...request, procsFiles, newSession: true }));
      return await awaitProcess(child, {
        stdin: request.stdin,
        timeoutMs: request.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        killTree: () => cgroups.kill(record.id, group, { reaped: true }),
      });
    } finally {
      await cgroups.removeChild(record.id, group);
    }
  };

  /** Starts a command in its own child cgroup; the group is removed (when empty) once it exits. */
  const startIn = async (record: InstanceRecord, request: ExecRequest): Promise<ExecProcess> => {
    if (request.command.length === 0) throw localError('invalid_config', 'exec needs a command');
    const { cgroups, instances } = await deps.ready();
    const group = `x${newId()}`;
    const procsFiles = await cgroups.createChild(record.id, group);
    const { maxOutputBytes: _cap, stdinStream, ...spawnRequest } = request;
    const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const killTree = () => cgroups.kill(record.id, group, { reaped: true });
    const cleanup = () => cgroups.removeChild(record.id, group);
    let child: HostChild;
    try {
      const spec = instances.spawnSpec(record, { ...spawnRequest, procsFiles, newSession: true });
      const agent = await agentFor(record);
      // The agent dies with the sandbox's init, and an init ending on SIGTERM first waits for the
      // rest of its namespace: give it a moment before calling the agent's end the sandbox's doing.
      const agentGone = async (reason: string) => {
        for (let waited = 0; waited < AGENT_GONE_GRACE_MS && (await instances.isAlive(record)); waited += 50) await sleep(50);
        if (await instances.isAlive(record))
          // Something inside the sandbox ended the agent (nothing outside does): a refusal, not a host failure.
          return localError(
            'not_running',
            `the command's exec agent went away while it ran (${reason}); the command was stopped, run it again`,
          );
        return localError('not_found', `sandbox ${record.id} stopped: ${await instances.initGone(record)}; create a new one`);
      };
      const viaAgent = await agent?.exec({ ...spec, stdin: request.stdin, stdinStream, timeoutMs, killTree, cleanup, agentGone });
      if (viaAgent) return viaAgent;
      child = await spawnInSandbox(spec);
    } catch (error) {
      await cleanup();
      throw error;
    }
    return streamProcess(child, { stdin: request.stdin, stdinStream, timeoutMs, killTree, cleanup });
  };

  /** Streams a command's stdout (a workspace tar), its stdin from `stdin`. Old path. */
  const streamFrom = async (
    record: InstanceRecord,
    command: string[],
    stdin: Readable | null,
  ): Promise<{ stdout: Readable; exit: Promise<RawExecResult> }> => {
    const { cgroups, instances } = await deps.ready();
    const group = `x${newId()}`;
    const procsFiles = await cgroups.createChild(record.id, group);
    const child = await spawnInSandbox(instances.spawnSpec(record, { command, procsFiles, newSession: true }));
    const { stdin: childStdin, stdout } = child;
    if (!childStdin || !stdout) {
      child.kill('SIGKILL');
      await cgroups.removeChild(record.id, group);
      throw localError('backend', 'the sandbox process was started without pipes');
    }
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const exit = new Promise<RawExecResult>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => {
        void cgroups.removeChild(record.id, group);
        resolve({ exitCode: code ?? 137, stdout: Buffer.alloc(0), stderr: Buffer.from(stderr), timedOut: false });
      });
    });
    if (stdin) stdin.pipe(childStdin);
    else childStdin.end();
    childStdin.on('error', () => undefined);
    return { stdout, exit };
  };

  /** Why a host-side step in the sandbox failed: the sandbox is gone when its init died under it. */
  const stepFailed = async (record: InstanceRecord, stderr: Buffer, message: string) => {
    const { instances } = await deps.ready();
    const text = stderr.toString('utf8');
    if (await instances.diedDuring(record, text))
      return localError('not_found', `sandbox ${record.id} stopped: ${await instances.initGone(record)}; create a new one`);
    return localError('backend', `${message}: ${text.trim()}`);
  };

  return {
    runIn,
    startIn,
    streamFrom,
    stepFailed,
    /** Takes over the agent a start's init forked (or starts one the old way): a started sandbox has its agent ready. */
    adoptAgent: adopt,
    /** Closes every agent (they kill what they still run and exit); a later exec starts a new one. */
    closeAgents: () => {
      for (const entry of agents.values()) entry.agent?.close();
      agents.clear();
    },
    /** Drops a destroyed sandbox's agent (its teardown kills it). */
    forgetAgent: (instanceId: string) => {
      agents.get(instanceId)?.agent?.close();
      agents.delete(instanceId);
    },
  };
}
