import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AGENT_FRAME, HOST_FRAME } from './agent-protocol.ts';
import { type AgentExecRequest, ExecAgent } from './exec-agent.ts';
import type { HostChild } from './spawner.ts';

/**
 * The host side of the agent against a stand-in process: what a compromised or broken agent
 * (anything inside the sandbox) can make of an exec. The real agent is tested in test/exec-agent.
 */

function frame(type: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUInt32LE(payload.length + 5, 0);
  header.writeUInt8(type, 4);
  header.writeUInt32LE(id, 5);
  return Buffer.concat([header, payload]);
}
const u32 = (value: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value, 0);
  return b;
};

function fakeAgent(options: { killGraceMs?: number } = {}) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  for (const s of [stdin, stdout, stderr]) Object.assign(s, { ref: () => s, unref: () => s });
  const child = Object.assign(new EventEmitter(), {
    stdio: [stdin, stdout, stderr] as unknown as Socket[],
    stdin: stdin as unknown as Socket,
    stdout: stdout as unknown as Socket,
    stderr: stderr as unknown as Socket,
    pid: 1,
    kill: () => undefined,
    unref: () => undefined,
  }) as HostChild;
  const sent: Array<{ type: number; id: number }> = [];
  stdin.on('data', (chunk: Buffer) => {
    for (let at = 0; at + 9 <= chunk.length; at += 4 + chunk.readUInt32LE(at))
      sent.push({ type: chunk.readUInt8(at + 4), id: chunk.readUInt32LE(at + 5) });
  });
  let stopped = 0;
  const agent = new ExecAgent(
    child,
    ['/nonexistent/agent/cgroup.procs'],
    () => {
      stopped++;
    },
    { locate: async (pid) => 100_000 + pid, killGraceMs: options.killGraceMs },
  );
  return { agent, say: (bytes: Buffer) => stdout.write(bytes), sent, stopped: () => stopped };
}

function request(overrides: Partial<AgentExecRequest> = {}) {
  const calls = { killTree: 0, cleanup: 0 };
  const req: AgentExecRequest = {
    cwd: '/',
    command: ['true'],
    env: {},
    timeoutMs: 60_000,
    procsFiles: [],
    killTree: async () => {
      calls.killTree++;
    },
    cleanup: async () => {
      calls.cleanup++;
    },
    agentGone: async (reason) => new Error(`gone: ${reason}`),
    ...overrides,
  };
  return { req, calls };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('exec agent, host side', () => {
  it('relays output and the exit of a command it started', async () => {
    const { agent, say, sent } = fakeAgent();
    say(frame(AGENT_FRAME.ready, 0, u32(5)));
    await agent.ready;
    const { req, calls } = request();
    const pending = agent.exec(req);
    await tick();
    say(frame(AGENT_FRAME.started, 1, u32(9)));
    const exec = (await pending)!;
    expect(sent.map((f) => f.type)).toEqual([HOST_FRAME.spawn, HOST_FRAME.go, HOST_FRAME.stdinEof]);
    say(Buffer.concat([frame(AGENT_FRAME.stdout, 1, Buffer.from('hi')), frame(AGENT_FRAME.exit, 1, u32(3))]));
    const chunks: string[] = [];
    for await (const chunk of exec.output) chunks.push((chunk as { data: Buffer }).data.toString());
    expect(chunks).toEqual(['hi']);
    expect(await exec.exit).toEqual({ exitCode: 3, timedOut: false });
    expect(calls.cleanup).toBe(1);
  });

  it('garbage before the command was let go: the agent is dropped and the exec reports not started (the old path runs it)', async () => {
    const { agent, say, stopped, sent } = fakeAgent();
    say(frame(AGENT_FRAME.ready, 0, u32(5)));
    await agent.ready;
    const pending = agent.exec(request().req);
    await tick();
    say(Buffer.from('not a frame at all, and far too long a length'));
    expect(await pending).toBeNull();
    expect(agent.alive).toBe(false);
    expect(stopped()).toBe(1);
    expect(sent.some((f) => f.type === HOST_FRAME.go)).toBe(false);
    // A later exec does not use it.
    expect(await agent.exec(request().req)).toBeNull();
  });

  it('a frame announcing more than the limit fails the running command and kills its tree', async () => {
    const { agent, say } = fakeAgent();
    say(frame(AGENT_FRAME.ready, 0, u32(5)));
    await agent.ready;
    const { req, calls } = request();
    const pending = agent.exec(req);
    await tick();
    say(frame(AGENT_FRAME.started, 1, u32(9)));
    const exec = (await pending)!;
    const readerSaw = new Promise((resolve) => exec.output.on('error', resolve));
    const huge = Buffer.alloc(9);
    huge.writeUInt32LE(0xffffffff, 0);
    say(huge);
    await expect(exec.exit).rejects.toThrow(/gone: the exec agent sent a frame of 4294967295 bytes/);
    // A reader of the stream learns it too.
    expect(String(await readerSaw)).toMatch(/gone: the exec agent sent/);
    expect(calls.killTree).toBe(1);
    expect(calls.cleanup).toBe(1);
    expect(agent.alive).toBe(false);
  });

  it('an agent that never reports a killed command: the host reports the timeout itself after the grace', async () => {
    const { agent, say, sent } = fakeAgent({ killGraceMs: 100 });
    say(frame(AGENT_FRAME.ready, 0, u32(5)));
    await agent.ready;
    const { req, calls } = request({ timeoutMs: 50 });
    const pending = agent.exec(req);
    await tick();
    say(frame(AGENT_FRAME.started, 1, u32(9)));
    const exec = (await pending)!;
    expect(await exec.exit).toEqual({ exitCode: 137, timedOut: true });
    expect(sent.some((f) => f.type === HOST_FRAME.kill)).toBe(true);
    expect(calls.killTree).toBe(1);
    expect(agent.alive).toBe(false);
  });

  it('events for ids it never asked about are ignored', async () => {
    const { agent, say } = fakeAgent();
    say(frame(AGENT_FRAME.ready, 0, u32(5)));
    await agent.ready;
    say(Buffer.concat([frame(AGENT_FRAME.exit, 77, u32(0)), frame(AGENT_FRAME.stdout, 78, Buffer.from('x'))]));
    await tick();
    expect(agent.alive).toBe(true);
  });
});
