import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { type ExecExit, ExecOutput, type ExecProcess } from '@sandcast/provider-sdk';

const DEFAULT_EXEC_TIMEOUT_MS = 60_000;

/**
 * Starts a command in its own process group and streams its output. On timeout, `kill()` or exit
 * the whole group is killed, so background children die with it.
 */
export function startProcess(options: {
  command: string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string | Buffer | undefined;
  stdinStream?: Readable | undefined;
  timeoutMs?: number | undefined;
  track: (pid: number, done: Promise<void>) => void;
}): ExecProcess {
  const [file, ...args] = options.command;
  const child = spawn(file ?? 'true', args, { cwd: options.cwd, env: options.env, detached: true, stdio: 'pipe' });
  const output = new ExecOutput(child.stdout, child.stderr);
  let timedOut = false;
  let closed = false;
  let settle: () => void = () => undefined;
  const done = new Promise<void>((r) => {
    settle = r;
  });
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS);
  child.stdout.on('data', (chunk: Buffer) => output.push('stdout', chunk));
  child.stderr.on('data', (chunk: Buffer) => output.push('stderr', chunk));
  child.stdin.on('error', () => undefined);
  if (options.stdinStream) options.stdinStream.pipe(child.stdin);
  else child.stdin.end(options.stdin ?? '');
  const exit = new Promise<ExecExit>((resolve) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      settle();
      output.push('stderr', Buffer.from(`${error.message}\n`));
      output.end();
      resolve({ exitCode: 127, timedOut: false });
    });
    child.on('close', (code, signal) => {
      closed = true;
      clearTimeout(timer);
      // Whatever the command left running in its group goes with it.
      killGroup(child.pid);
      settle();
      output.end();
      resolve({ exitCode: code ?? (signal ? 128 + signalNumber(signal) : 1), timedOut });
    });
  });
  if (child.pid !== undefined) options.track(child.pid, done);
  return {
    output: output.readable,
    exit,
    kill: async () => {
      clearTimeout(timer);
      // Once its pipes closed the group is gone and its number may be someone else's: leave it.
      if (!closed) killGroup(child.pid);
      // Nobody reads what is left: let the pipes drain so the child can be reaped.
      output.discard();
    },
  };
}

export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function signalNumber(signal: NodeJS.Signals): number {
  return { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal as string] ?? 0;
}
