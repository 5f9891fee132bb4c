import { readFile } from 'node:fs/promises';
import { hostSpawn } from './spawner.ts';

export interface RunResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export interface RunOptions {
  cwd?: string | undefined;
  input?: string | Buffer | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** Line-by-line stderr/stdout listener, for progress. */
  onLine?: ((line: string) => void) | undefined;
}

/** Runs a host command to completion; never throws on a non-zero exit (callers decide). */
export async function run(command: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const child = await hostSpawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    if (!child.stdout || !child.stderr || !child.stdin) return reject(new Error(`${command} could not be started`));
    const out: Buffer[] = [];
    let err = '';
    let pending = '';
    const feed = (text: string) => {
      if (!options.onLine) return;
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) options.onLine(line);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      out.push(chunk);
      feed(chunk.toString('utf8'));
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8');
      feed(chunk.toString('utf8'));
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout: Buffer.concat(out), stderr: err }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** Runs a host command and throws with its stderr when it fails. */
export async function runOk(command: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const result = await run(command, args, options);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.code}: ${result.stderr.trim().slice(-2000)}`);
  return result;
}

/** Quotes a string for a POSIX shell. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The kernel's task flag for a process that has begun to exit (include/linux/sched.h). */
const PF_EXITING = 0x4;

/** The kernel's start time of a process (clock ticks since boot), or null when it is gone or exiting. */
export async function processStartTime(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses; fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    if (state === 'Z' || state === 'X') return null;
    // PF_EXITING: killed and on its way out. A pid namespace's init stays in this state (sleeping,
    // not yet a zombie) until every other process of its namespace is gone, which can take a while.
    if (Number(fields[6]) & PF_EXITING) return null;
    return Number(fields[19]);
  } catch {
    return null;
  }
}

/** A process's pid in its innermost pid namespace (the last `NSpid` field), or null when it is gone. */
export async function innermostPid(pid: number): Promise<number | null> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const nspids = /^NSpid:\s*([\d\s]+)$/m.exec(status)?.[1]?.trim().split(/\s+/) ?? [];
  return nspids.length > 1 ? Number(nspids.at(-1)) : null;
}

export function killQuietly(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
