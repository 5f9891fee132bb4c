import { describe, expect, it } from 'vitest';
import { awaitReady, createNonce, type HandshakeResult } from './handshake.ts';
import { createManualClock, createMemoryByteSource, settle } from './testing/index.ts';

const NONCE = '0123456789abcdef0123456789abcdef';
const ready = (nonce = NONCE) => `{"version":1,"type":"ready","nonce":"${nonce}"}\n`;

async function handshake(feed: (source: ReturnType<typeof createMemoryByteSource>) => void) {
  const clock = createManualClock();
  const input = createMemoryByteSource();
  let outcome: HandshakeResult | undefined;
  void awaitReady({ input, nonce: NONCE, clock }).then((r) => {
    outcome = r;
  });
  feed(input);
  await settle();
  return { outcome, clock, input, result: () => outcome };
}

describe('awaitReady', () => {
  it('is ready on the READY frame and passes on what follows it, the rest of the same chunk first', async () => {
    const { outcome } = await handshake((s) => {
      s.push(`banner line\n${ready()}{"version":1,"type":"heartbeat"}\n`);
      s.push('{"version":1,"type":"heart');
      s.push('beat"}\n');
      s.end();
    });
    expect(outcome?.ready).toBe(true);
    const frames = [];
    if (outcome?.ready) for await (const r of outcome.frames) frames.push(r);
    expect(frames).toEqual([
      { frame: { version: 1, type: 'heartbeat' }, bytes: 33 },
      { frame: { version: 1, type: 'heartbeat' }, bytes: 33 },
    ]);
  });

  it('accepts READY split across chunks', async () => {
    const { outcome } = await handshake((s) => {
      const line = ready();
      s.push(line.slice(0, 20));
      s.push(line.slice(20));
    });
    expect(outcome?.ready).toBe(true);
  });

  it('times out after 10 s without READY, and gives the stream up', async () => {
    const { clock, input, result } = await handshake((s) => s.push('still starting\n'));
    await clock.advance(9_999);
    expect(result()).toBeUndefined();
    await clock.advance(1);
    expect(result()).toEqual({ ready: false, reason: 'ready_timeout' });
    expect(input.released).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('refuses a READY with another nonce', async () => {
    const { outcome } = await handshake((s) => s.push(ready('ffffffffffffffffffffffffffffffff')));
    expect(outcome).toEqual({ ready: false, reason: 'ready_nonce_mismatch' });
  });

  it('refuses a READY with an extra field, a missing nonce or another version as ready_invalid', async () => {
    for (const line of [
      `{"version":1,"type":"ready","nonce":"${NONCE}","port":9}\n`,
      '{"version":1,"type":"ready"}\n',
      `{"version":2,"type":"ready","nonce":"${NONCE}"}\n`,
      `{"version":1,"type":"ready","nonce":7}\n`,
    ]) {
      const { outcome } = await handshake((s) => s.push(line));
      expect(outcome, line).toEqual({ ready: false, reason: 'ready_invalid' });
    }
  });

  it('counts lines before READY and calls more than 8 KiB contamination', async () => {
    const ok = await handshake((s) => {
      s.push(`${'x'.repeat(8 * 1024 - 1)}\n`);
      s.push(ready());
    });
    expect(ok.outcome?.ready).toBe(true);
    const { outcome } = await handshake((s) => {
      for (let i = 0; i < 100; i++) s.push(`${'x'.repeat(99)}\n`);
      s.push(ready());
    });
    expect(outcome).toEqual({ ready: false, reason: 'contaminated' });
  });

  it('calls a long line without a newline contamination without waiting for its end', async () => {
    const { outcome } = await handshake((s) => {
      for (let i = 0; i < 9; i++) s.push('y'.repeat(1024));
    });
    expect(outcome).toEqual({ ready: false, reason: 'contaminated' });
  });

  it('takes the gateway’s bind_failed, an ended stream and a failed stream as channel_open_failed', async () => {
    const bind = await handshake((s) => s.push('{"version":1,"type":"error","code":"bind_failed"}\n'));
    expect(bind.outcome).toEqual({ ready: false, reason: 'channel_open_failed' });
    const ended = await handshake((s) => s.end());
    expect(ended.outcome).toEqual({ ready: false, reason: 'channel_open_failed' });
    const failed = await handshake((s) => s.fail(new Error('exec attach refused')));
    expect(failed.outcome).toEqual({ ready: false, reason: 'channel_open_failed' });
  });

  it('never answers a request sent before READY: it is only a skipped line', async () => {
    const { outcome } = await handshake((s) => {
      s.push('{"version":1,"type":"request","id":"early","method":"GET","path":"/","headers":{},"body":""}\n');
      s.push(ready());
      s.end();
    });
    expect(outcome?.ready).toBe(true);
    const after = [];
    if (outcome?.ready) for await (const r of outcome.frames) after.push(r);
    expect(after).toEqual([]);
  });
});

describe('createNonce', () => {
  it('is 16 random bytes in lowercase hex', () => {
    const a = createNonce();
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(createNonce()).not.toBe(a);
  });
});
