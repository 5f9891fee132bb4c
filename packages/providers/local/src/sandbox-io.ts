import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { type ExecExit, ExecOutput, type ExecProcess } from '@sandcast/provider-sdk';
import type { HostChild } from './spawner.ts';

/** Cap on captured exec output per stream; more is dropped and noted. */
const OUTPUT_LIMIT = 64 * 1024 * 1024;

export interface RawExecResult {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
}

function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const number = signal ? (constants.signals as Record<string, number>)[signal] : undefined;
  return 128 + (number ?? 9);
}

function collect(stream: Readable | null): () => Buffer {
  const chunks: Buffer[] = [];
  let size = 0;
  stream?.on('data', (chunk: Buffer) => {
    if (size >= OUTPUT_LIMIT) return;
    chunks.push(chunk);
    size += chunk.length;
  });
  return () => Buffer.concat(chunks);
}

/**
 * Waits for a sandbox process, feeding stdin and collecting output. On timeout `killTree` kills
 * the process's whole cgroup (every descendant, wherever it was reparented).
 */
export function awaitProcess(
  child: HostChild,
  options: { stdin?: string | Buffer | undefined; timeoutMs: number; killTree: () => Promise<void> },
): Promise<RawExecResult> {
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void options.killTree();
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: timedOut ? 137 : exitCodeOf(code, signal), stdout: stdout(), stderr: stderr(), timedOut });
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.stdin ?? '');
  });
}

/**
 * Streams a sandbox process's output with backpressure (the pipes pause while the reader lags).
 * On timeout or `kill()`, `killTree` kills the process's whole cgroup; `cleanup` runs once the
 * process is gone.
 */
export function streamProcess(
  child: HostChild,
  options: {
    stdin?: string | Buffer | undefined;
    stdinStream?: Readable | undefined;
    timeoutMs: number;
    killTree: () => Promise<void>;
    cleanup: () => Promise<void>;
  },
): ExecProcess {
  const pipes = [child.stdout, child.stderr].filter((pipe): pipe is NonNullable<typeof pipe> => pipe !== null);
  const output = new ExecOutput(...pipes);
  child.stdout?.on('data', (chunk: Buffer) => output.push('stdout', chunk));
  child.stderr?.on('data', (chunk: Buffer) => output.push('stderr', chunk));
  let timedOut = false;
  // A killed command's exit is reported once its tree is gone and reaped, so the next command
  // finds the sandbox's pids free again.
  let killing: Promise<void> | null = null;
  const killTree = () => {
    killing ??= options.killTree();
    return killing;
  };
  const timer = setTimeout(() => {
    timedOut = true;
    void killTree();
  }, options.timeoutMs);
  const exit = new Promise<ExecExit>((resolve, reject) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      output.end();
      void options.cleanup();
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      output.end();
      void (async () => {
        await killing?.catch(() => undefined);
        await options.cleanup();
        resolve({ exitCode: timedOut ? 137 : exitCodeOf(code, signal), timedOut });
      })();
    });
  });
  // A caller that only streams may never await `exit`; its rejection is reported through `output`.
  exit.catch((error: unknown) => output.readable.destroy(error as Error));
  child.stdin?.on('error', () => undefined);
  if (options.stdinStream && child.stdin) options.stdinStream.pipe(child.stdin);
  else child.stdin?.end(options.stdin ?? '');
  return {
    output: output.readable,
    exit,
    kill: async () => {
      clearTimeout(timer);
      // Nobody reads what is left: let the pipes drain so the process can be reaped.
      output.discard();
      await killTree();
    },
  };
}
