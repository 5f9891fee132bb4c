import type { EventEmitter } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { type ExecExit, ExecOutput, type ExecProcess } from '@sandcast/provider-sdk';
import {
  AgentDecoder,
  type AgentEvent,
  controlFrame,
  HOST_FRAME,
  STDIN_CHUNK,
  STDIN_WINDOW,
  spawnFrame,
  stdinFrame,
} from './agent-protocol.ts';
import { innermostPid } from './proc.ts';
import type { HostChild } from './spawner.ts';

/** What the host holds of an agent: its control stream (one duplex socket, or a child's stdin and stdout) and its end. */
export interface AgentChannel extends EventEmitter {
  readonly stdin: HostChild['stdin'];
  readonly stdout: HostChild['stdout'];
  readonly stderr: HostChild['stderr'];
  unref(): void;
}

/**
 * One sandbox's exec agent (native/sandcast-exec-agent.c, ADR 0030), seen from the host: forked
 * by the sandbox's init (ADR 0034) or started through the ordinary exec path, its control stream
 * carries framed requests and answers. A command is forked by the agent and waits until the host has moved it into the
 * exec's own cgroup (found by its pid in the sandbox, among the agent group's processes), so
 * limits, timeouts and tree kills work as for a command started the old way.
 */

/** How long an exec waits for the agent to say the command was forked before running it the old way. */
const START_TIMEOUT_MS = 5_000;
/** After a timeout or kill, how long the agent has to report the exit before the host reports it itself. */
const KILL_GRACE_MS = 5_000;

export interface AgentExecRequest {
  cwd: string;
  command: string[];
  env: Record<string, string>;
  stdin?: string | Buffer | undefined;
  stdinStream?: Readable | undefined;
  timeoutMs: number;
  /** The exec cgroup's `cgroup.procs` files the command joins before it may exec. */
  procsFiles: string[];
  killTree: () => Promise<void>;
  cleanup: () => Promise<void>;
  /** The error of a command whose agent went away while it ran (the sandbox may be gone with it). */
  agentGone: (reason: string) => Promise<Error>;
}

interface Pending {
  onEvent(event: AgentEvent): void;
  onGone(reason: string): void;
}

export class ExecAgent {
  private readonly execs = new Map<number, Pending>();
  private nextId = 1;
  private gone: string | null = null;
  private readonly whenGone: Promise<string>;
  private markGone: (reason: string) => void = () => undefined;
  readonly ready: Promise<void>;
  private stderr = '';
  /** The agent's pid inside the sandbox (its ready frame) and, once seen, on the host. */
  private innerPid = 0;
  private ownPid = 0;

  /**
   * @param child the agent's process (sh → nsenter → bwrap → agent), or the socket of one its init forked
   * @param agentProcs the agent's `cgroup.procs` files; the last is its own group's, which holds the
   *   agent and the commands it forked that were not moved yet, nothing else (nothing inside can
   *   write a cgroup file)
   * @param stop kills the agent's whole cgroup
   */
  constructor(
    private readonly child: AgentChannel,
    private readonly agentProcs: string[],
    private readonly stop: () => void,
    private readonly options: {
      /** How a command's host pid is found (tests stand in for the kernel); default: by `NSpid`. */
      locate?: (pid: number) => Promise<number | null>;
      killGraceMs?: number;
    } = {},
  ) {
    this.whenGone = new Promise((resolve) => {
      this.markGone = resolve;
    });
    let announced: (() => void) | null = null;
    this.ready = new Promise<void>((resolve, reject) => {
      announced = resolve;
      void this.whenGone.then((reason) => reject(new Error(reason)));
    });
    this.ready.catch(() => undefined);
    const decoder = new AgentDecoder(
      (event) => {
        if (event.type === 'ready') {
          this.innerPid = event.pid;
          return announced?.();
        }
        this.execs.get(event.id)?.onEvent(event);
      },
      (reason) => this.fail(reason),
    );
    child.stdout?.on('data', (chunk: Buffer) => decoder.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-500);
    });
    child.stdin?.on('error', () => undefined);
    child.on('error', (error: Error) => this.fail(`the exec agent failed: ${error.message}`));
    child.on('exit', () => this.fail(`the exec agent exited${this.stderr.trim() ? `: ${this.stderr.trim()}` : ''}`));
    // Its output ending is its end too, whether or not an exit is reported (the spawner may be gone).
    child.stdout?.on('close', () => this.fail('the exec agent closed its output'));
    child.unref();
    this.reference(false);
  }

  get alive(): boolean {
    return this.gone === null;
  }

  /** Stops the agent; every command it runs is reported failed. */
  fail(reason: string): void {
    if (this.gone !== null) return;
    this.gone = reason;
    this.stop();
    this.markGone(reason);
    for (const exec of [...this.execs.values()]) exec.onGone(reason);
    this.execs.clear();
    this.reference(false);
  }

  /** Ends the agent by closing its stdin (it kills what it still runs and exits). */
  close(): void {
    this.child.stdin?.end();
  }

  /** The agent keeps the server alive only while a command runs through it. */
  private reference(on: boolean): void {
    for (const socket of [this.child.stdin, this.child.stdout, this.child.stderr]) {
      if (on) socket?.ref();
      else socket?.unref();
    }
  }

  private send(frame: Buffer): void {
    if (this.gone === null) this.child.stdin?.write(frame);
  }

  /** The command's host pid: the process of the agent's group whose innermost pid is `pid`. */
  private async hostPid(pid: number): Promise<number | null> {
    const listed = (await readFile(this.agentProcs.at(-1)!, 'utf8').catch(() => '')).split('\n').filter((line) => /^\d+$/.test(line));
    for (const candidate of listed.map(Number)) {
      if (candidate === this.ownPid) continue;
      const inner = await innermostPid(candidate);
      if (inner !== null && inner === pid) return candidate;
      // The agent itself (its pid inside was in its ready frame) is skipped from then on.
      if (inner !== null && inner === this.innerPid) this.ownPid = candidate;
    }
    return null;
  }

  /**
   * Runs a command through the agent. Null when it was not started (the agent is gone or busy,
   * the request cannot be framed, or the command could not join its cgroup): the caller runs it
   * the old way, and nothing of it ran. Once started, the agent's death fails it.
   */
  async exec(request: AgentExecRequest): Promise<ExecProcess | null> {
    const spawn = spawnFrame(this.nextId, request);
    if (!spawn || this.gone !== null) return null;
    const id = this.nextId++;
    if (this.execs.size === 0) this.reference(true);
    const release = () => {
      this.execs.delete(id);
      if (this.execs.size === 0 && this.gone === null) this.reference(false);
    };
    // Events that arrive before the process below is built (output right after GO) wait here.
    const early: AgentEvent[] = [];
    let handler: Pending = { onEvent: (event) => early.push(event), onGone: () => undefined };
    const started = new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        // A wedged agent is dropped (its cgroup killed), so later execs do not wait on it too.
        this.fail('the exec agent did not answer a spawn request');
        resolve(null);
      }, START_TIMEOUT_MS);
      handler = {
        onEvent: (event) => {
          if (event.type === 'started' || event.type === 'failed') {
            clearTimeout(timer);
            resolve(event.type === 'started' ? event.pid : null);
          } else early.push(event);
        },
        onGone: () => {
          clearTimeout(timer);
          resolve(null);
        },
      };
    });
    this.execs.set(id, { onEvent: (event) => handler.onEvent(event), onGone: (reason) => handler.onGone(reason) });
    this.send(spawn);
    const pid = await started;
    const hostPid = pid === null ? null : await (this.options.locate ?? ((inner) => this.hostPid(inner)))(pid);
    // Only the groups the agent is not in itself (the exec's own); the sandbox-wide ones it inherited.
    const moves = request.procsFiles.filter((file) => !this.agentProcs.includes(file));
    const joined =
      hostPid !== null &&
      (await Promise.all(moves.map((file) => writeFile(file, String(hostPid)))).then(
        () => true,
        () => false,
      ));
    if (!joined || this.gone !== null) {
      // Forked but never let go: it is killed before it could run anything.
      this.send(controlFrame(HOST_FRAME.kill, id));
      release();
      return null;
    }
    this.send(controlFrame(HOST_FRAME.go, id));
    return this.running(
      id,
      request,
      early,
      (next) => {
        handler = next;
      },
      release,
    );
  }

  private running(
    id: number,
    request: AgentExecRequest,
    early: AgentEvent[],
    listen: (handler: Pending) => void,
    release: () => void,
  ): ExecProcess {
    const output = new ExecOutput({
      pause: () => this.send(controlFrame(HOST_FRAME.pause, id)),
      resume: () => this.send(controlFrame(HOST_FRAME.resume, id)),
    });
    let timedOut = false;
    let killing: Promise<void> | null = null;
    let hardDeadline: NodeJS.Timeout | null = null;
    let settle: (result: { exit: ExecExit } | { error: Promise<Error> }) => void = () => undefined;
    const killTree = () => {
      this.send(controlFrame(HOST_FRAME.kill, id));
      killing ??= request.killTree();
      // The agent reports the exit once the command is reaped; if it does not, the host does.
      hardDeadline ??= setTimeout(() => {
        settle({ exit: { exitCode: 137, timedOut } });
        this.fail('the exec agent did not report a killed command');
      }, this.options.killGraceMs ?? KILL_GRACE_MS);
      return killing;
    };
    const timer = setTimeout(() => {
      timedOut = true;
      void killTree();
    }, request.timeoutMs);

    const stdin = this.feedStdin(id, request);
    const exit = new Promise<ExecExit>((resolve, reject) => {
      let settled = false;
      settle = (result) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (hardDeadline) clearTimeout(hardDeadline);
        stdin.stop();
        release();
        output.end();
        void (async () => {
          await killing?.catch(() => undefined);
          await request.cleanup();
          if ('exit' in result) resolve(result.exit);
          else reject(await result.error);
        })();
      };
    });
    const onEvent = (event: AgentEvent) => {
      if (event.type === 'stdout' || event.type === 'stderr') output.push(event.type, event.data);
      else if (event.type === 'stdinAck') stdin.acked(event.bytes);
      else if (event.type === 'exit') settle({ exit: { exitCode: timedOut ? 137 : event.code, timedOut } });
    };
    listen({
      onEvent,
      onGone: (reason) => {
        // The command ran and nothing can report its end any more: stop what is left of it.
        killing ??= request.killTree();
        settle({ error: request.agentGone(reason) });
      },
    });
    for (const event of early) onEvent(event);
    // A caller that only streams may never await `exit`; its rejection is reported through `output`.
    exit.catch((error: unknown) => output.readable.destroy(error as Error));
    return {
      output: output.readable,
      exit,
      kill: async () => {
        clearTimeout(timer);
        output.discard();
        await killTree();
      },
    };
  }

  /** Sends the command's stdin within the agent's window; a stream is paused while the window is full. */
  private feedStdin(id: number, request: AgentExecRequest): { acked(bytes: number): void; stop(): void } {
    let inFlight = 0;
    let queue: Buffer[] = [];
    let ended = false;
    let stopped = false;
    const stream = request.stdinStream;
    const pump = () => {
      while (!stopped && queue.length > 0 && inFlight < STDIN_WINDOW) {
        const next = queue[0]!;
        const part = next.subarray(0, Math.min(STDIN_CHUNK, STDIN_WINDOW - inFlight));
        if (part.length === next.length) queue.shift();
        else queue[0] = next.subarray(part.length);
        inFlight += part.length;
        this.send(stdinFrame(id, part));
      }
      if (stopped) return;
      if (queue.length === 0 && ended) {
        this.send(controlFrame(HOST_FRAME.stdinEof, id));
        ended = false;
        stopped = true;
      } else if (stream && inFlight < STDIN_WINDOW && stream.isPaused()) stream.resume();
    };
    const onData = (chunk: Buffer | string) => {
      queue.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      if (inFlight >= STDIN_WINDOW) stream?.pause();
      pump();
    };
    const onEnd = () => {
      ended = true;
      pump();
    };
    if (stream) {
      stream.on('data', onData);
      stream.once('end', onEnd);
      stream.once('error', onEnd);
    } else {
      const data = request.stdin ?? '';
      if (data.length > 0) queue.push(typeof data === 'string' ? Buffer.from(data) : data);
      ended = true;
      pump();
    }
    return {
      acked: (bytes) => {
        inFlight = Math.max(0, inFlight - bytes);
        pump();
      },
      stop: () => {
        stopped = true;
        queue = [];
        stream?.off('data', onData);
        stream?.off('end', onEnd);
        stream?.off('error', onEnd);
      },
    };
  }
}
