import {
  collectExecOutput,
  type ExecExit,
  ExecOutput,
  type ExecProcess,
  type ExecRequest,
  type ExecResult,
  PidLineFilter,
  ProviderError,
  pidLineCommand,
} from '@sandcast/provider-sdk';
import type Docker from 'dockerode';
import { WORKDIR } from './config.ts';
import { ENGINE_CALL_DEADLINE_MS, PROVIDER_ID, statusOf, toProviderError, withDeadline } from './connection.ts';
import type { ContainerHandle } from './containers.ts';

const DEFAULT_EXEC_TIMEOUT_MS = 60_000;
/** How long a killed command gets to close its streams before we stop waiting. */
const DRAIN_AFTER_KILL_MS = 3_000;
/** How long a timeout waits for the wrapper's pid line when the command timed out very early. */
const PID_WAIT_MS = 2_000;
/** Stdout chunks held back until the wrapper's pid line shows it ran (the engine's errors are short). */
const HELD_STDOUT_CHUNKS = 16;
/**
 * Every command runs under a tiny shell wrapper that first prints its own pid on stderr and then
 * execs the command. Docker starts exec processes as session leaders, so that pid is also the
 * process group of everything the command spawns: a timeout kills the group through a second exec.
 */
const PID_MARKER = 'sandcast-exec-pid=';

function wrapCommand(command: string[]): string[] {
  return pidLineCommand(PID_MARKER, { toStderr: true, name: 'sandcast-exec' }, command);
}

/**
 * Splits Docker's multiplexed attach stream (8-byte header: stream type, 3 zero bytes, big-endian
 * length) into stdout and stderr, synchronously, so nothing is still in flight when the stream ends.
 */
export class StreamDemuxer {
  private pending: Buffer = Buffer.alloc(0);
  constructor(
    private readonly onStdout: (chunk: Buffer) => void,
    private readonly onStderr: (chunk: Buffer) => void,
  ) {}
  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 8) {
      const length = this.pending.readUInt32BE(4);
      if (this.pending.length < 8 + length) break;
      const payload = this.pending.subarray(8, 8 + length);
      if (this.pending[0] === 2) this.onStderr(payload);
      else this.onStdout(payload);
      this.pending = this.pending.subarray(8 + length);
    }
  }
}

/** Kills a process group inside the container through a second exec. */
export async function killProcessGroup(handle: ContainerHandle, pid: number, signal: 'KILL' | 'HUP' | 'TERM' = 'KILL'): Promise<void> {
  // During a capture the container is frozen anyway; the kill is refused rather than raced with the pause.
  const entry = handle.gate?.enter(handle.container.id);
  try {
    await startKill(handle, pid, signal);
  } finally {
    entry?.release();
  }
}

async function startKill(handle: ContainerHandle, pid: number, signal: 'KILL' | 'HUP' | 'TERM'): Promise<void> {
  const exec = await handle.container.exec({
    // `-s SIG --` is the one spelling dash, bash and busybox all accept for a negative (group) pid.
    Cmd: ['/bin/sh', '-c', `kill -s ${signal} -- -${pid} 2>/dev/null || kill -s ${signal} ${pid} 2>/dev/null; true`],
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  await new Promise<void>((resolve) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', () => resolve());
    stream.resume();
  });
}

async function exitCodeOf(exec: Docker.Exec): Promise<number | null> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const info = await exec.inspect();
    if (!info.Running) return info.ExitCode ?? null;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return null;
}

/** Maps a failure to start an exec: a stopped container is a state the caller can act on. */
export async function execStartError(error: unknown, handle: ContainerHandle): Promise<ProviderError> {
  if (statusOf(error) === 409) {
    const reason = await handle.stoppedReason?.().catch(() => undefined);
    return new ProviderError({
      provider: PROVIDER_ID,
      code: 'not_running',
      message: reason
        ? `sandbox container ${handle.instanceId.slice(0, 12)} was ${reason}`
        : `sandbox container ${handle.instanceId.slice(0, 12)} is not running; start the sandbox again, or recreate it`,
      cause: error,
    });
  }
  return toProviderError(error, {
    action: 'run a command',
    what: `sandbox container ${handle.instanceId.slice(0, 12)}`,
    engineUrl: handle.engineUrl,
  });
}

/**
 * Starts a command and streams its output: exit code, separated output, stdin, cwd, env, timeout.
 * Backpressure reaches the command: while the output is not read, the attach stream is paused,
 * the engine stops copying and the command blocks on its next write.
 */
export async function startExec(handle: ContainerHandle, request: ExecRequest): Promise<ExecProcess> {
  if (request.command.length === 0) {
    throw new ProviderError({ provider: PROVIDER_ID, code: 'invalid_config', message: 'exec needs a command' });
  }
  const hasStdin = request.stdin !== undefined || request.stdinStream !== undefined;
  let exec: Docker.Exec;
  let stream: NodeJS.ReadWriteStream & { destroy(): void };
  const entry = handle.gate?.enter(handle.container.id);
  try {
    exec = await handle.container.exec({
      Cmd: wrapCommand(request.command),
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: hasStdin,
      Tty: false,
      WorkingDir: request.cwd ?? WORKDIR,
      Env: Object.entries(request.env ?? {}).map(([key, value]) => `${key}=${value}`),
    });
    stream = (await withDeadline(exec.start({ hijack: true, stdin: hasStdin }), ENGINE_CALL_DEADLINE_MS, {
      action: 'start a command',
      engineUrl: handle.engineUrl,
    })) as NodeJS.ReadWriteStream & { destroy(): void };
    entry?.releaseWhenStarted(exec);
  } catch (error) {
    entry?.release();
    throw await execStartError(error, handle);
  }

  const output = new ExecOutput(stream);
  // Until the wrapper's pid line is seen, stdout may be the engine's own error (a missing cwd):
  // hold it back, then pass it on as stdout once the wrapper ran, or as stderr when it never did.
  let heldStdout: Buffer[] | null = [];
  const releaseStdout = (as: 'stdout' | 'stderr') => {
    const held = heldStdout ?? [];
    heldStdout = null;
    for (const chunk of held) output.push(as, chunk);
  };
  const marker = new PidLineFilter(PID_MARKER, (chunk) => {
    if (heldStdout) releaseStdout('stdout');
    output.push('stderr', chunk);
  });
  const demux = new StreamDemuxer(
    (chunk) => {
      if (heldStdout && marker.pid === null && heldStdout.length < HELD_STDOUT_CHUNKS) heldStdout.push(chunk);
      else {
        if (heldStdout) releaseStdout('stdout');
        output.push('stdout', chunk);
      }
    },
    (chunk) => {
      marker.push(chunk);
      if (heldStdout && marker.pid !== null) releaseStdout('stdout');
    },
  );
  stream.on('data', (chunk: Buffer) => demux.push(chunk));

  let streamError: unknown;
  const ended = new Promise<void>((resolve) => {
    stream.on('end', () => resolve());
    stream.on('close', () => resolve());
    stream.on('error', (error) => {
      streamError = error;
      resolve();
    });
  });

  if (request.stdinStream) {
    // Copied as it arrives; its end half-closes the attach stream, so the command sees end of input.
    request.stdinStream.pipe(stream);
  } else if (hasStdin) {
    const data = typeof request.stdin === 'string' ? Buffer.from(request.stdin, 'utf8') : (request.stdin as Buffer);
    // Half-close after writing: the command sees end of input while its output keeps flowing.
    stream.end(data);
  }

  let timedOut = false;
  let killed = false;
  let killing: Promise<void> | null = null;
  const killTree = () => {
    killing ??= (async () => {
      // A kill sooner than the wrapper's start-up: give the pid line a moment to arrive.
      for (let waited = 0; marker.pid === null && waited < PID_WAIT_MS; waited += 20) await new Promise((r) => setTimeout(r, 20));
      if (marker.pid !== null) await killProcessGroup(handle, marker.pid).catch(() => undefined);
      const drain = setTimeout(() => stream.destroy(), DRAIN_AFTER_KILL_MS);
      void ended.then(() => clearTimeout(drain));
    })();
    return killing;
  };
  const timer = setTimeout(() => {
    timedOut = true;
    void killTree();
  }, request.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS);

  const exit = (async (): Promise<ExecExit> => {
    await ended;
    clearTimeout(timer);
    marker.flush();
    // The wrapper never ran (a missing cwd, say): the engine wrote its own error to stdout.
    const runtimeFailed = marker.pid === null && !timedOut && !killed;
    if (heldStdout) releaseStdout(runtimeFailed ? 'stderr' : 'stdout');
    output.end();
    if (streamError !== undefined && !timedOut && !killed) {
      throw toProviderError(streamError, { action: 'read command output', engineUrl: handle.engineUrl });
    }
    let exitCode: number | null = null;
    try {
      exitCode = await exitCodeOf(exec);
    } catch (error) {
      throw toProviderError(error, { action: 'read an exit code', engineUrl: handle.engineUrl });
    }
    // A killed command reports 137 (128 + SIGKILL), as a shell would.
    return { exitCode: exitCode ?? (timedOut || killed ? 137 : -1), timedOut };
  })();
  // A caller that only streams may never await `exit`; a failure then ends `output` with it.
  exit.catch((error: unknown) => output.readable.destroy(error as Error));

  return {
    output: output.readable,
    exit,
    kill: async () => {
      killed = true;
      clearTimeout(timer);
      // Nobody reads what is left: let it drain so the exec can finish.
      output.discard();
      await killTree();
    },
  };
}

/** Runs a command to completion, keeping at most `request.maxOutputBytes` of each stream. */
export async function runExec(handle: ContainerHandle, request: ExecRequest): Promise<ExecResult> {
  return collectExecOutput(await startExec(handle, request), { maxOutputBytes: request.maxOutputBytes });
}
