import { spawn } from 'node:child_process';
import type { ExecResult } from '@sandcast/provider-sdk';

export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;

/**
 * Runs a command in its own process group and collects its output. On timeout the whole group
 * is killed, so background children die with it.
 */
export function runProcess(options: {
  command: string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string | Buffer | undefined;
  timeoutMs?: number | undefined;
  track: (pid: number, done: Promise<void>) => void;
}): Promise<ExecResult> {
  return new Promise((resolve) => {
    const [file, ...args] = options.command;
    const child = spawn(file ?? 'true', args, { cwd: options.cwd, env: options.env, detached: true, stdio: 'pipe' });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let timedOut = false;
    let settle: () => void = () => undefined;
    const done = new Promise<void>((r) => {
      settle = r;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
    child.on('error', (error) => {
      clearTimeout(timer);
      settle();
      resolve({ exitCode: 127, stdout: '', stderr: `${error.message}\n`, timedOut: false });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Whatever the command left running in its group goes with it.
      killGroup(child.pid);
      settle();
      resolve({
        exitCode: code ?? (signal ? 128 + signalNumber(signal) : 1),
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        timedOut,
      });
    });
    if (child.pid !== undefined) options.track(child.pid, done);
  });
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
