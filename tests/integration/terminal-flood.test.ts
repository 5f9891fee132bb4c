import { SandcastClient } from '@sandcast/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type ServerProcess, startServerProcess } from './support/terminal-server-process.ts';

const MiB = 1024 * 1024;
/** 768 MiB of zeros through base64: just over 1 GiB of terminal output. */
const FLOOD = 'head -c 805306368 /dev/zero | base64; echo FLOOD-""DONE\r';
/** How much the server's resident memory may grow while the flood runs. */
const RSS_GROWTH_BOUND = 96 * MiB;

describe('browser terminal under an output flood', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServerProcess();
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('holds a 1 GiB flood back in the sandbox while the reader stalls, and keeps server memory bounded', { timeout: 240_000 }, async () => {
    const client = new SandcastClient({ baseUrl: server.url });
    const token = await client.customImages.terminalSessionToken(server.setupSessionId);
    const socket = new WebSocket(new URL(`${token.websocketPath}&cols=120&rows=40`, server.url.replace('http', 'ws')));
    let received = 0;
    let tail = '';
    let done = false;
    socket.on('message', (data: Buffer, isBinary) => {
      if (!isBinary) return;
      received += data.length;
      tail = (tail + data.toString('latin1')).slice(-64);
      if (tail.includes('FLOOD-DONE')) done = true;
    });
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'auth', token: token.token }));
    await new Promise<void>((resolve) => socket.once('message', () => resolve()));
    socket.send(JSON.stringify({ type: 'input', data: 'echo warm\r' }));
    await new Promise((r) => setTimeout(r, 500));

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
      // The reader stalls for 3 s: the server must pause the PTY instead of buffering the flood.
      socket.pause();
      socket.send(JSON.stringify({ type: 'input', data: FLOOD }));
      await new Promise((r) => setTimeout(r, 3000));
      const stalledPeak = peak;
      expect(received).toBeLessThan(64 * MiB);
      socket.resume();
      const deadline = Date.now() + 200_000;
      while (!done && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(done, `flood did not finish; received ${received} bytes`).toBe(true);
      expect(received).toBeGreaterThan(1024 * MiB);
      console.info(
        `flood: ${(received / MiB).toFixed(0)} MiB received; server RSS baseline ${(baseline / MiB).toFixed(1)} MiB, ` +
          `peak while stalled +${((stalledPeak - baseline) / MiB).toFixed(1)} MiB, peak overall +${((peak - baseline) / MiB).toFixed(1)} MiB`,
      );
      expect(stalledPeak - baseline).toBeLessThan(RSS_GROWTH_BOUND);
      expect(peak - baseline).toBeLessThan(RSS_GROWTH_BOUND);
    } finally {
      clearInterval(sampler);
      socket.close();
    }
  });
});
