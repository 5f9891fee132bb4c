import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../../bench/terminal/server-process.ts', import.meta.url));

export interface ServerProcess {
  url: string;
  pid: number;
  setupSessionId: string;
  /** The SSH gateway's port, or null when the process runs without it. */
  sshPort: number | null;
  /** Resident set size of the server process now, in bytes (from /proc). */
  rss(): Promise<number>;
  /** Null while the process runs; its exit code or signal once it has died. */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Everything the process wrote to stdout (its log lines) and stderr. */
  output(): string;
  /** Resolves on the first stdout line that matches (a log event); rejects if the process exits first. */
  waitForLine(pattern: RegExp): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts a Sandcast server in a child process with a running setup session: a clean heap to
 * measure, and a process whose death a test can see. `env` adds to the process's environment
 * (e.g. `SANDCAST_SSH_PORT: '0'`, `SANDCAST_LOG_LEVEL: 'debug'`).
 */
export async function startServerProcess(options: { env?: Record<string, string> } = {}): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    stdio: ['pipe', 'pipe', 'pipe'],
    // The test decides, not the developer's shell: no gateway and quiet logs unless asked for.
    env: { ...process.env, SANDCAST_SSH_PORT: 'off', SANDCAST_LOG_LEVEL: 'warn', ...options.env },
  });
  let output = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const lineListeners = new Set<(line: string) => void>();
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    partial += chunk.toString();
    let end = partial.indexOf('\n');
    while (end >= 0) {
      const line = partial.slice(0, end);
      partial = partial.slice(end + 1);
      for (const listener of [...lineListeners]) listener(line);
      end = partial.indexOf('\n');
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    process.stderr.write(chunk);
  });
  const exitedPromise = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve();
    }),
  );
  const waitForLine = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const listener = (line: string) => {
        if (!pattern.test(line)) return;
        lineListeners.delete(listener);
        resolve(line);
      };
      lineListeners.add(listener);
      exitedPromise.then(() => {
        if (!lineListeners.delete(listener)) return;
        reject(new Error(`the server process exited (${JSON.stringify(exit)}) before a line matched ${pattern}:\n${output.slice(-4000)}`));
      });
    });
  const started = waitForLine(/^\{"url"/);
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const line = await started.finally(() => clearTimeout(timer));
  const info = JSON.parse(line) as { url: string; pid: number; setupSessionId: string; sshPort: number | null };
  return {
    ...info,
    rss: async () => {
      const status = await readFile(`/proc/${info.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
    },
    exited: () => exit,
    output: () => output,
    waitForLine,
    stop: async () => {
      if (exit) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exitedPromise;
      clearTimeout(timer);
    },
  };
}
