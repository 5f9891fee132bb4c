/**
 * Browser terminal benchmark (ARCHITECTURE §12). From one run it prints:
 *  - keystroke round trip (one character → its echo) through WebSocket → server → PTY, against
 *    writing to a PTY directly in this process (p50 / p95, and the ratio of the medians);
 *  - output throughput of a large `cat` (base64 of zeros) through the WebSocket, against the same
 *    command on a direct PTY;
 *  - the server's peak resident memory during that flood (the server runs in a process of its own).
 * Loopback only; bounded loops; the server process and its data dir are removed at the end.
 *
 *   npx tsx bench/terminal/run.ts [--keystrokes 400] [--flood-mib 1024]
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { SandcastClient } from '@sandcast/client';
import * as nodePty from 'node-pty';
import WebSocket from 'ws';
import { percentile } from '../support/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const KEYSTROKES = Math.min(5000, Math.max(20, option('--keystrokes', 400)));
/** Terminal output of the flood, in MiB (base64 of 3/4 as many zero bytes). */
const FLOOD_MIB = Math.min(4096, Math.max(16, option('--flood-mib', 1024)));
const WARMUP = 20;
const MiB = 1024 * 1024;
const SERVER_SCRIPT = fileURLToPath(new URL('./server-process.ts', import.meta.url));

const ms = (n: number) => `${n.toFixed(3)} ms`;

/** A byte stream into a shell, whichever way it is reached. */
interface Terminal {
  write(data: string): void;
  onData(listener: (chunk: Buffer) => void): void;
  close(): void;
}

/** Types one character at a time and waits for its echo; returns the round trips in ms. */
async function keystrokes(terminal: Terminal, count: number): Promise<number[]> {
  let waiting: ((chunk: Buffer) => void) | null = null;
  terminal.onData((chunk) => waiting?.(chunk));
  const roundTrip = (char: string) =>
    new Promise<number>((resolve, reject) => {
      const started = process.hrtime.bigint();
      const timer = setTimeout(() => reject(new Error(`no echo of ${JSON.stringify(char)} within 5 s`)), 5000);
      waiting = (chunk) => {
        if (!chunk.includes(char)) return;
        clearTimeout(timer);
        waiting = null;
        resolve(Number(process.hrtime.bigint() - started) / 1e6);
      };
      terminal.write(char);
    });
  const settle = () => new Promise((r) => setTimeout(r, 100));
  const times: number[] = [];
  for (let i = 0; i < count + WARMUP; i++) {
    // Kill the line now and then (^U) so the canonical line buffer never fills.
    if (i % 200 === 199) {
      terminal.write('\u0015');
      await settle();
    }
    const elapsed = await roundTrip(String.fromCharCode(97 + (i % 26)));
    if (i >= WARMUP) times.push(elapsed);
  }
  terminal.write('\u0015');
  await settle();
  return times;
}

/** Runs the flood command and returns bytes per second of terminal output. */
async function flood(terminal: Terminal, mib: number, onTick?: () => void): Promise<{ bytes: number; seconds: number }> {
  const input = Math.floor((mib * MiB * 3) / 4);
  let bytes = 0;
  let tail = '';
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  terminal.onData((chunk) => {
    bytes += chunk.length;
    tail = (tail + chunk.toString('latin1')).slice(-64);
    if (tail.includes('FLOOD-DONE')) resolveDone();
  });
  const ticker = onTick ? setInterval(onTick, 50) : null;
  const started = process.hrtime.bigint();
  terminal.write(`head -c ${input} /dev/zero | base64; echo FLOOD-""DONE\r`);
  const deadline = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error('the flood did not finish within 10 minutes')), 600_000).unref(),
  );
  await Promise.race([done, deadline]);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (ticker) clearInterval(ticker);
  return { bytes, seconds };
}

function directPty(): Terminal {
  const child = nodePty.spawn('sh', ['-i'], {
    name: 'xterm-256color',
    cols: 120,
    rows: 40,
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), TERM: 'xterm-256color', PS1: '$ ' },
    encoding: null,
  } as nodePty.IPtyForkOptions);
  return {
    write: (data) => child.write(data),
    onData: (listener) => child.onData((chunk: string | Buffer) => listener(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))),
    close: () => child.kill('SIGHUP'),
  };
}

async function websocketTerminal(baseUrl: string, setupSessionId: string): Promise<Terminal> {
  const client = new SandcastClient({ baseUrl });
  const token = await client.customImages.terminalSessionToken(setupSessionId);
  const socket = new WebSocket(new URL(`${token.websocketPath}&cols=120&rows=40`, baseUrl.replace(/^http/, 'ws')));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const ready = new Promise<void>((resolve, reject) => {
    socket.once('message', (data: Buffer, isBinary) => {
      const frame = isBinary ? null : (JSON.parse(data.toString()) as { type: string; message?: string });
      if (frame?.type === 'ready') resolve();
      else reject(new Error(`terminal refused: ${frame?.message ?? 'unexpected frame'}`));
    });
  });
  socket.send(JSON.stringify({ type: 'auth', token: token.token }));
  await ready;
  return {
    write: (data) => socket.send(JSON.stringify({ type: 'input', data })),
    onData: (listener) =>
      socket.on('message', (data: Buffer, isBinary) => {
        if (isBinary) listener(data);
      }),
    close: () => socket.close(),
  };
}

async function startServerProcess() {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
  // The server's own log lines share stdout: the first line naming a setup session is the one.
  const info = await new Promise<{ url: string; pid: number; setupSessionId: string }>((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        const parsed = (() => {
          try {
            return JSON.parse(line) as { url?: string; pid: number; setupSessionId?: string };
          } catch {
            return null;
          }
        })();
        if (parsed?.url && parsed.setupSessionId) resolve(parsed as { url: string; pid: number; setupSessionId: string });
      }
    });
    child.once('exit', (code) => reject(new Error(`the server process exited (${code})`)));
  });
  const rss = async () => Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${info.pid}/status`, 'utf8'))![1]) * 1024;
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return { ...info, rss, stop };
}

async function main(): Promise<void> {
  const server = await startServerProcess();
  try {
    const viaServer = await websocketTerminal(server.url, server.setupSessionId);
    const direct = directPty();
    await new Promise((r) => setTimeout(r, 500));

    const wsTimes = await keystrokes(viaServer, KEYSTROKES);
    const directTimes = await keystrokes(direct, KEYSTROKES);
    const wsP50 = percentile(wsTimes, 50);
    const directP50 = percentile(directTimes, 50);
    console.log(`\nkeystroke round trip (${KEYSTROKES} characters each, ${WARMUP} warm-up; one character → its echo)`);
    console.log(`  WebSocket → server → PTY   p50 ${ms(wsP50)}   p95 ${ms(percentile(wsTimes, 95))}`);
    console.log(`  direct PTY                 p50 ${ms(directP50)}   p95 ${ms(percentile(directTimes, 95))}`);
    console.log(`  WebSocket / direct (p50)   ${(wsP50 / directP50).toFixed(2)}×`);

    const baseline = await server.rss();
    let peak = baseline;
    const sample = () => {
      server.rss().then(
        (rss) => {
          peak = Math.max(peak, rss);
        },
        () => undefined,
      );
    };
    const wsFlood = await flood(viaServer, FLOOD_MIB, sample);
    const directFlood = await flood(direct, FLOOD_MIB);
    const wsRate = wsFlood.bytes / MiB / wsFlood.seconds;
    const directRate = directFlood.bytes / MiB / directFlood.seconds;
    console.log(`\noutput throughput (base64 of zeros, ${(wsFlood.bytes / MiB).toFixed(0)} MiB of terminal output)`);
    console.log(`  WebSocket → client         ${wsRate.toFixed(1)} MiB/s (${wsFlood.seconds.toFixed(1)} s)`);
    console.log(`  direct PTY                 ${directRate.toFixed(1)} MiB/s (${directFlood.seconds.toFixed(1)} s)`);
    console.log(`  WebSocket / direct         ${(wsRate / directRate).toFixed(2)}×`);
    console.log(`\nserver memory during the flood (own process, RSS sampled every 50 ms)`);
    console.log(
      `  before ${(baseline / MiB).toFixed(1)} MiB   peak ${(peak / MiB).toFixed(1)} MiB   growth ${((peak - baseline) / MiB).toFixed(1)} MiB`,
    );

    viaServer.close();
    direct.close();
  } finally {
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(error);
    process.exit(1);
  },
);
