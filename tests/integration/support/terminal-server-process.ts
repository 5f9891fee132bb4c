import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../../bench/terminal/server-process.ts', import.meta.url));

export interface ServerProcess {
  url: string;
  pid: number;
  setupSessionId: string;
  /** Resident set size of the server process now, in bytes (from /proc). */
  rss(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts a Sandcast server in a child process (a clean heap to measure) with a running setup session. */
export async function startServerProcess(): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const end = buffered.indexOf('\n');
      if (end >= 0) resolve(buffered.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`the server process exited (${code}) before it was ready`)));
    setTimeout(() => reject(new Error('the server process did not start within 60 s')), 60_000).unref();
  });
  const info = JSON.parse(line) as { url: string; pid: number; setupSessionId: string };
  return {
    ...info,
    rss: async () => {
      const status = await readFile(`/proc/${info.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
