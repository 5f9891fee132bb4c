import type { ExecRequest, ExecResult } from '@sandcast/provider-sdk';
import { ProviderError } from '@sandcast/provider-sdk';
import type Docker from 'dockerode';
import { WORKDIR } from './config.ts';
import { ENGINE_CALL_DEADLINE_MS, PROVIDER_ID, statusOf, toProviderError, withDeadline } from './connection.ts';
import type { ContainerHandle } from './containers.ts';

export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;
/** How long a killed command gets to close its streams before we stop waiting. */
const DRAIN_AFTER_KILL_MS = 3_000;
/** How long a timeout waits for the wrapper's pid line when the command timed out very early. */
const PID_WAIT_MS = 2_000;
/** Output beyond this is dropped (and said so) rather than held in memory. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * Every command runs under a tiny shell wrapper that first prints its own pid on stderr and then
 * execs the command. Docker starts exec processes as session leaders, so that pid is also the
 * process group of everything the command spawns: a timeout kills the group through a second exec.
 */
const PID_MARKER = 'sandcast-exec-pid=';
const WRAPPER = `printf '${PID_MARKER}%s\\n' "$$" >&2; exec "$@"`;

export function wrapCommand(command: string[]): string[] {
  return ['/bin/sh', '-c', WRAPPER, 'sandcast-exec', ...command];
}

/** Collects output up to a cap. */
class OutputBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  push(chunk: Buffer): void {
    if (this.size >= MAX_OUTPUT_BYTES) {
      this.truncated = true;
      return;
    }
    const room = MAX_OUTPUT_BYTES - this.size;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) this.truncated = true;
    this.chunks.push(part);
    this.size += part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8') + (this.truncated ? '\n[sandcast: output truncated]\n' : '');
  }
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

/** Strips the wrapper's pid line from the front of stderr and reports the pid once it is seen. */
class PidMarkerFilter {
  private head = '';
  private done = false;
  pid: number | null = null;
  constructor(private readonly sink: (chunk: Buffer) => void) {}
  push(chunk: Buffer): void {
    if (this.done) {
      this.sink(chunk);
      return;
    }
    this.head += chunk.toString('latin1');
    const newline = this.head.indexOf('\n');
    if (newline < 0 && this.head.length < 64) return;
    this.done = true;
    const line = newline < 0 ? '' : this.head.slice(0, newline);
    const rest = Buffer.from(line.startsWith(PID_MARKER) ? this.head.slice(newline + 1) : this.head, 'latin1');
    if (line.startsWith(PID_MARKER)) this.pid = Number(line.slice(PID_MARKER.length)) || null;
    if (rest.length > 0) this.sink(rest);
  }
  flush(): void {
    if (!this.done && this.head.length > 0) this.sink(Buffer.from(this.head, 'latin1'));
    this.done = true;
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
        : `sandbox container ${handle.instanceId.slice(0, 12)} is not running; recreate the sandbox`,
      cause: error,
    });
  }
  return toProviderError(error, {
    action: 'run a command',
    what: `sandbox container ${handle.instanceId.slice(0, 12)}`,
    engineUrl: handle.engineUrl,
  });
}

/** Runs a command to completion: exit code, separated output, stdin, cwd, env, timeout. */
export async function runExec(handle: ContainerHandle, request: ExecRequest): Promise<ExecResult> {
  if (request.command.length === 0) {
    throw new ProviderError({ provider: PROVIDER_ID, code: 'invalid_config', message: 'exec needs a command' });
  }
  const hasStdin = request.stdin !== undefined;
  let exec: Docker.Exec;
  let stream: NodeJS.ReadWriteStream;
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
    })) as NodeJS.ReadWriteStream;
    entry?.releaseWhenStarted(exec);
  } catch (error) {
    entry?.release();
    throw await execStartError(error, handle);
  }

  const stdout = new OutputBuffer();
  const stderr = new OutputBuffer();
  const marker = new PidMarkerFilter((chunk) => stderr.push(chunk));
  const demux = new StreamDemuxer(
    (chunk) => stdout.push(chunk),
    (chunk) => marker.push(chunk),
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

  if (hasStdin) {
    const data = typeof request.stdin === 'string' ? Buffer.from(request.stdin, 'utf8') : (request.stdin as Buffer);
    // Half-close after writing: the command sees end of input while its output keeps flowing.
    stream.end(data);
  }

  const timeoutMs = request.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const outcome = await Promise.race([ended.then(() => 'ended' as const), timeout]);
  clearTimeout(timer);

  if (outcome === 'timeout') {
    timedOut = true;
    // A timeout shorter than the wrapper's start-up: give the pid line a moment to arrive.
    for (let waited = 0; marker.pid === null && waited < PID_WAIT_MS; waited += 20) await new Promise((r) => setTimeout(r, 20));
    if (marker.pid !== null) await killProcessGroup(handle, marker.pid).catch(() => undefined);
    const drained = await Promise.race([
      ended.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), DRAIN_AFTER_KILL_MS)),
    ]);
    if (!drained) (stream as unknown as { destroy(): void }).destroy();
  }
  marker.flush();
  if (streamError !== undefined && !timedOut) {
    throw toProviderError(streamError, { action: 'read command output', engineUrl: handle.engineUrl });
  }

  let exitCode: number | null = null;
  try {
    exitCode = await exitCodeOf(exec);
  } catch (error) {
    throw toProviderError(error, { action: 'read an exit code', engineUrl: handle.engineUrl });
  }
  // The wrapper never ran (a missing cwd, say): the engine wrote its own error to stdout.
  const runtimeFailed = marker.pid === null && !timedOut && exitCode !== 0;
  return {
    // A killed command reports 137 (128 + SIGKILL), as a shell would.
    exitCode: exitCode ?? (timedOut ? 137 : -1),
    stdout: runtimeFailed ? '' : stdout.text(),
    stderr: runtimeFailed ? stdout.text() + stderr.text() : stderr.text(),
    timedOut,
  };
}
