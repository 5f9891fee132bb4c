import { type ChildProcess, fork, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * Where the local provider's host commands (mount, mkfs, the sandbox's init, every exec's
 * `sh → nsenter → bwrap`) are started from. Node forks to spawn, and a fork copies the page
 * tables of the whole process: in a server holding an embedded database (PGlite, several hundred
 * MB resident) each spawn cost 20–35 ms instead of 2–3 ms. A small helper process
 * (spawner-helper.mjs) does the forking instead; it hands each child's pipes back over its IPC
 * channel, so output, stdin and backpressure run between the server and the command directly,
 * as before. Nothing changes for the command itself: same command line, same environment.
 */

type StdioEntry = 'pipe' | 'ignore' | { path: string; flags: string };

export interface HostSpawnOptions {
  cwd?: string | undefined;
  env: NodeJS.ProcessEnv;
  detached?: boolean | undefined;
  stdio: StdioEntry[];
}

/** The part of a ChildProcess the provider uses. */
export interface HostChild extends EventEmitter {
  readonly stdio: Array<Socket | null>;
  readonly stdin: Socket | null;
  readonly stdout: Socket | null;
  readonly stderr: Socket | null;
  pid: number | undefined;
  kill(signal?: NodeJS.Signals): void;
  /** Stops the pending child from keeping this process alive (a detached init). */
  unref(): void;
}

const HELPER = fileURLToPath(new URL('./spawner-helper.mjs', import.meta.url));

type HelperMessage =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'stdio'; id: number; index: number }
  | { op: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { op: 'error'; id: number; message: string; code?: string };

class RemoteChild extends EventEmitter implements HostChild {
  readonly stdio: Array<Socket | null>;
  pid: number | undefined;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private openStreams: number;
  private awaitedPipes: number;
  private closed = false;
  referenced = true;
  /** Resolves once every pipe has arrived (or the spawn failed): the streams exist from then on. */
  readonly ready: Promise<void>;
  private markReady: () => void = () => undefined;
  private refuse: (error: Error) => void = () => undefined;

  constructor(
    readonly id: number,
    spec: StdioEntry[],
    private readonly helper: Helper,
  ) {
    super();
    this.stdio = spec.map(() => null);
    // stdin is written, not read: its close says nothing about the command's end.
    this.openStreams = spec.filter((entry, index) => entry === 'pipe' && index > 0).length;
    this.awaitedPipes = spec.filter((entry) => entry === 'pipe').length;
    this.ready = new Promise((resolve, reject) => {
      this.markReady = resolve;
      this.refuse = reject;
    });
    if (this.awaitedPipes === 0) this.markReady();
  }

  get stdin() {
    return this.stdio[0] ?? null;
  }
  get stdout() {
    return this.stdio[1] ?? null;
  }
  get stderr() {
    return this.stdio[2] ?? null;
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.exit) this.helper.send({ op: 'kill', id: this.id, signal });
  }

  unref(): void {
    if (!this.referenced) return;
    this.referenced = false;
    this.helper.release();
  }

  attach(index: number, socket: Socket): void {
    this.stdio[index] = socket;
    if (index > 0) socket.once('close', () => this.streamClosed());
    socket.on('error', () => undefined);
    if (--this.awaitedPipes > 0) return;
    this.markReady();
    if (this.exit) this.tellExit();
  }

  // Events are emitted after the caller's `await hostSpawn()` has resumed and attached its
  // listeners: several messages can arrive in one read.
  /** Every pipe is here: the exit (which may overtake them on the channel) can be told. */
  get complete(): boolean {
    return this.awaitedPipes === 0;
  }

  exited(code: number | null, signal: NodeJS.Signals | null): void {
    this.exit = { code, signal };
    if (this.complete) this.tellExit();
  }

  private tellExit(): void {
    const { code, signal } = this.exit!;
    setImmediate(() => {
      this.emit('exit', code, signal);
      this.maybeClose();
    });
  }

  failed(error: Error): void {
    // Before its pipes arrived, the spawn itself failed: `hostSpawn` rejects with why.
    if (this.awaitedPipes > 0) {
      this.refuse(error);
      return;
    }
    setImmediate(() => {
      this.emit('error', error);
      for (const socket of this.stdio) socket?.destroy();
    });
  }

  private streamClosed(): void {
    this.openStreams--;
    this.maybeClose();
  }

  private maybeClose(): void {
    if (this.closed || !this.exit || this.openStreams > 0) return;
    this.closed = true;
    this.emit('close', this.exit.code, this.exit.signal);
  }
}

class Helper {
  private readonly process: ChildProcess;
  private readonly children = new Map<number, RemoteChild>();
  private nextId = 1;
  /** Requests that keep this process alive: the IPC channel is referenced while there are any. */
  private held = 0;
  gone = false;

  constructor(onGone: () => void) {
    // No loader, no inherited flags: a bare Node with one small script.
    this.process = fork(HELPER, [], { execArgv: [], serialization: 'json', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.process.on('message', (message: HelperMessage, handle?: Socket) => this.receive(message, handle));
    const lost = () => {
      if (this.gone) return;
      this.gone = true;
      onGone();
      for (const child of this.children.values())
        if (child.referenced) child.failed(new Error('the local provider spawner process exited'));
      this.children.clear();
    };
    this.process.on('exit', lost);
    this.process.on('error', lost);
    this.unrefChannel();
  }

  private unrefChannel(): void {
    this.process.unref();
    (this.process.channel as unknown as { unref?: () => void } | undefined)?.unref?.();
  }

  send(message: object): void {
    if (!this.gone && this.process.connected) this.process.send(message);
  }

  release(): void {
    this.held--;
    if (this.held === 0) this.unrefChannel();
  }

  /** No command is pending but detached ones (which outlive this process anyway). */
  get idle(): boolean {
    return this.held === 0;
  }

  spawn(file: string, args: string[], options: HostSpawnOptions): RemoteChild {
    const id = this.nextId++;
    const child = new RemoteChild(id, options.stdio, this);
    this.children.set(id, child);
    if (this.held++ === 0) {
      this.process.ref();
      (this.process.channel as unknown as { ref?: () => void } | undefined)?.ref?.();
    }
    this.send({
      op: 'spawn',
      id,
      file,
      args,
      cwd: options.cwd,
      env: options.env,
      detached: options.detached ?? false,
      stdio: options.stdio,
    });
    return child;
  }

  private receive(message: HelperMessage, handle?: Socket): void {
    const child = this.children.get(message.id);
    if (!child) {
      handle?.destroy();
      return;
    }
    switch (message.op) {
      case 'spawned':
        child.pid = message.pid;
        child.emit('spawn');
        return;
      case 'stdio':
        if (handle) child.attach(message.index, handle);
        if (child.exit && child.complete) this.forget(child);
        return;
      case 'exit':
        child.exited(message.code, message.signal);
        if (child.complete) this.forget(child);
        return;
      case 'error':
        this.forget(child);
        child.failed(Object.assign(new Error(message.message), { code: message.code }));
    }
  }

  private forget(child: RemoteChild): void {
    this.children.delete(child.id);
    child.unref();
  }

  stop(): void {
    this.gone = true;
    this.process.kill('SIGTERM');
  }
}

let helper: Helper | null = null;

/**
 * Starts a host command through the spawner process (started on first use), or straight from
 * this process when SANDCAST_LOCAL_SPAWNER=direct (read on every call: the benchmarks compare both).
 */
export async function hostSpawn(file: string, args: string[], options: HostSpawnOptions): Promise<HostChild> {
  if (process.env.SANDCAST_LOCAL_SPAWNER === 'direct') {
    const stdio = options.stdio.map((entry) => (typeof entry === 'object' ? openSync(entry.path, entry.flags) : entry));
    try {
      return spawn(file, args, { cwd: options.cwd, env: options.env, detached: options.detached, stdio }) as unknown as HostChild;
    } finally {
      for (const fd of stdio) if (typeof fd === 'number') closeSync(fd);
    }
  }
  if (!helper || helper.gone) {
    const current = new Helper(() => {
      if (helper === current) helper = null;
    });
    helper = current;
  }
  const child = helper.spawn(file, args, options);
  await child.ready;
  return child;
}

/** Ends the spawner process once no command it started is pending (a later spawn starts a new one). */
export function stopSpawnerWhenIdle(): void {
  if (helper?.idle) {
    helper.stop();
    helper = null;
  }
}
