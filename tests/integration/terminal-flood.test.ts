import { readFile } from 'node:fs/promises';
import { SandcastClient } from '@sandcast/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type ServerProcess, startServerProcess } from './support/terminal-server-process.ts';
import { TextCollector } from './support/text-collector.ts';

const MiB = 1024 * 1024;
/** 768 MiB of zeros through base64: just over 1 GiB of terminal output. */
const FLOOD = 'head -c 805306368 /dev/zero | base64; echo FLOOD-""DONE\r';
/** How much the server's resident memory may grow while the flood runs. */
const RSS_GROWTH_BOUND = 96 * MiB;
/**
 * How far the sandbox's writer may get ahead of a stalled reader: the server's high-water mark
 * (256 KiB), the socket buffers between server and reader (a few MiB with autotuning) and the
 * kernel's PTY buffer. A server that kept reading would be hundreds of MiB ahead.
 */
const LEAD_BOUND = 32 * MiB;

/** Waits for a condition of another process (from /proc), checking every few ms; fails after `timeoutMs`. */
async function until<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The child of `parent` running `comm` (the fake provider's sandbox processes are host processes). */
async function childNamed(parent: number, comm: string): Promise<number | null> {
  const children = await readFile(`/proc/${parent}/task/${parent}/children`, 'utf8');
  for (const pid of children.trim().split(/\s+/).filter(Boolean).map(Number)) {
    if ((await readFile(`/proc/${pid}/comm`, 'utf8')).trim() === comm) return pid;
  }
  return null;
}
const bytesWritten = async (pid: number) => Number(/wchar: (\d+)/.exec(await readFile(`/proc/${pid}/io`, 'utf8'))![1]);
/** True while the process sleeps in a terminal write (the kernel's PTY buffer is full). */
const blockedOnTerminal = async (pid: number) =>
  (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.startsWith('S') &&
  (await readFile(`/proc/${pid}/wchan`, 'utf8')).trim() === 'wait_woken';

describe('browser terminal under an output flood', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServerProcess({ env: { SANDCAST_LOG_LEVEL: 'debug' } });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('holds a 1 GiB flood back in the sandbox while the reader stalls, and keeps server memory bounded', { timeout: 300_000 }, async () => {
    const client = new SandcastClient({ baseUrl: server.url });
    const token = await client.customImages.terminalSessionToken(server.setupSessionId);
    const socket = new WebSocket(new URL(`${token.websocketPath}&cols=120&rows=40`, server.url.replace('http', 'ws')));
    const text = new TextCollector();
    let received = 0;
    let tail = '';
    let resolveDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve;
    });
    const ready = new Promise<Record<string, unknown>>((resolve) =>
      socket.on('message', (data: Buffer, isBinary) => {
        if (!isBinary) {
          resolve(JSON.parse(data.toString()) as Record<string, unknown>);
          return;
        }
        received += data.length;
        if (received < MiB) text.push(data);
        tail = (tail + data.toString('latin1')).slice(-64);
        if (tail.includes('FLOOD-DONE')) resolveDone();
      }),
    );
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'auth', token: token.token }));
    expect(await ready).toMatchObject({ type: 'ready', terminalSessionId: token.id });
    socket.send(JSON.stringify({ type: 'input', data: 'echo "shell=$$"\r' }));
    const shellPid = Number(/shell=(\d+)/.exec(await text.waitFor(/shell=\d+/))![0].slice('shell='.length));

    const baseline = await server.rss();
    let peak = baseline;
    const sampler = setInterval(() => {
      server.rss().then(
        (rss) => {
          peak = Math.max(peak, rss);
        },
        () => undefined,
      );
    }, 50);
    try {
      // The reader stalls. The server must pause the PTY instead of buffering the flood: it says so,
      // and the writer in the sandbox then blocks on the full terminal.
      const paused = server.waitForLine(/terminal source paused/);
      socket.pause();
      socket.send(JSON.stringify({ type: 'input', data: FLOOD }));
      await paused;
      const writer = await until('the flood writer', () => childNamed(shellPid, 'base64'));
      // The writer settles: blocked on the terminal, and still at the same byte count after the
      // server's event loop has turned many times (it answered 20 requests). As the reader's socket
      // buffers grow the server may send a little more, so this can take a few rounds; a server
      // that kept reading would never settle before the writer ran out of input.
      const written = await until('the writer to settle', async () => {
        if (!(await blockedOnTerminal(writer))) return null;
        const before = await bytesWritten(writer);
        for (let i = 0; i < 20; i++) expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
        return (await blockedOnTerminal(writer)) && (await bytesWritten(writer)) === before ? before : null;
      });
      const lead = written - received;
      expect(lead).toBeLessThan(LEAD_BOUND);
      const stalledPeak = peak;

      socket.resume();
      await done;
      expect(received).toBeGreaterThan(1024 * MiB);
      console.info(
        `flood: ${(received / MiB).toFixed(0)} MiB received; writer ${(lead / MiB).toFixed(1)} MiB ahead of the stalled reader; ` +
          `server RSS baseline ${(baseline / MiB).toFixed(1)} MiB, peak while stalled +${((stalledPeak - baseline) / MiB).toFixed(1)} MiB, ` +
          `peak overall +${((peak - baseline) / MiB).toFixed(1)} MiB`,
      );
      expect(stalledPeak - baseline).toBeLessThan(RSS_GROWTH_BOUND);
      expect(peak - baseline).toBeLessThan(RSS_GROWTH_BOUND);
    } finally {
      clearInterval(sampler);
      socket.close();
    }
  });
});
