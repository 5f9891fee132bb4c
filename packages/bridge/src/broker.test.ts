import { describe, expect, it } from 'vitest';
import { type BrokerOptions, type ChannelEnd, createDuplexBroker } from './broker.ts';
import { BridgeConfigError } from './budgets.ts';
import { encodeFrame } from './codec.ts';
import type { ForwardRequest, ForwardResponse } from './forward.ts';
import type { ResponseFrame } from './frames.ts';
import { decodeStream } from './handshake.ts';
import { MAX_LIFETIME_REQUESTS } from './ledger.ts';
import { refusalAnswer } from './refusals.ts';
import { createManualClock, createMemoryByteSource, createMemoryFrameSink, settle } from './testing/index.ts';

interface Call {
  request: ForwardRequest;
  signal: AbortSignal;
  resolve(response: ForwardResponse): void;
  reject(error: unknown): void;
}

function setup(options: Partial<BrokerOptions> & { auto?: boolean } = {}) {
  const clock = createManualClock();
  const input = createMemoryByteSource();
  const sink = createMemoryFrameSink();
  const calls: Call[] = [];
  const broker = createDuplexBroker({
    frames: decodeStream(input),
    sink,
    clock,
    forward: (request, signal) =>
      new Promise<ForwardResponse>((resolve, reject) => {
        calls.push({ request, signal, resolve, reject });
        if (options.auto) resolve({ status: 200, headers: { 'Content-Type': 'text/plain' }, body: Buffer.from(`for ${request.id}`) });
      }),
    ...options,
  });
  let end: ChannelEnd | undefined;
  void broker.ended.then((e) => {
    end = e;
  });
  const send = (id: string, method = 'GET', body = '') =>
    input.push(encodeFrame({ version: 1, type: 'request', id, method, path: '/api/sessions/s1/files', headers: { accept: '*/*' }, body }));
  const responses = () => sink.frames().filter((f): f is ResponseFrame => f.type === 'response');
  const answerOf = (id: string) => responses().filter((r) => r.id === id);
  const errorCode = (r: ResponseFrame | undefined) =>
    r ? (JSON.parse(Buffer.from(r.body, 'base64').toString()) as { error: { code: string } }).error.code : undefined;
  return { clock, input, sink, calls, broker, send, responses, answerOf, errorCode, end: () => end };
}

describe('createDuplexBroker', () => {
  it('forwards a request once and writes its answer with clean headers', async () => {
    const t = setup({ auto: true });
    t.send('a', 'POST', Buffer.from('{"x":1}').toString('base64'));
    await settle();
    expect(t.calls).toHaveLength(1);
    expect(t.calls[0]?.request).toMatchObject({ id: 'a', method: 'POST', path: '/api/sessions/s1/files' });
    expect(t.calls[0]?.request.body.toString()).toBe('{"x":1}');
    expect(t.answerOf('a')).toEqual([
      {
        version: 1,
        type: 'response',
        id: 'a',
        status: 200,
        headers: { 'content-type': 'text/plain' },
        body: Buffer.from('for a').toString('base64'),
      },
    ]);
  });

  it('refuses budgets that do not nest, at construction', () => {
    const make = (budgets: BrokerOptions['budgets']) => () => setup({ budgets });
    expect(make({ forwardMs: 32_000, responseMs: 30_000, gatewayWaitMs: 35_000 })).toThrow(BridgeConfigError);
    expect(make({ forwardMs: 30_000, responseMs: 36_000, gatewayWaitMs: 35_000 })).toThrow(/forwardMs < responseMs < gatewayWaitMs/);
    expect(make({ forwardMs: 30_000, responseMs: 30_000, gatewayWaitMs: 35_000 })).toThrow(BridgeConfigError);
    expect(make({ forwardMs: 0, responseMs: 1, gatewayWaitMs: 2 })).toThrow(BridgeConfigError);
    try {
      make({ forwardMs: 3, responseMs: 2, gatewayWaitMs: 1 })();
    } catch (error) {
      expect((error as BridgeConfigError).code).toBe('invalid_budgets');
    }
  });

  it('answers the 65th request in flight 503 bridge_busy, retryable, and forwards the same id once a slot is free', async () => {
    const t = setup();
    for (let i = 0; i < 65; i++) t.send(`r${i}`);
    await settle();
    expect(t.calls).toHaveLength(64);
    const busy = t.answerOf('r64')[0];
    expect(busy?.status).toBe(503);
    expect(busy?.headers['x-sandcast-bridge-retryable']).toBe('true');
    expect(t.errorCode(busy)).toBe('bridge_busy');
    t.calls[0]?.resolve({ status: 204, headers: {}, body: new Uint8Array() });
    await settle();
    t.send('r64');
    await settle();
    expect(t.calls.map((c) => c.request.id)).toContain('r64');
  });

  it('carries at most the lifetime number of ids, then refuses without retry', async () => {
    expect(MAX_LIFETIME_REQUESTS).toBe(50_000);
    const t = setup({ auto: true, maxLifetimeRequests: 3 });
    for (const id of ['a', 'b', 'c', 'd']) t.send(id);
    await settle();
    expect(t.calls).toHaveLength(3);
    const refused = t.answerOf('d')[0];
    expect(refused?.status).toBe(503);
    expect(refused?.headers['x-sandcast-bridge-retryable']).toBe('false');
    expect(t.errorCode(refused)).toBe('channel_exhausted');
  });

  it('never forwards an id twice: a repeat in flight waits for the one answer, a later one gets it again', async () => {
    const t = setup();
    t.send('dup', 'POST');
    t.send('dup', 'POST');
    await settle();
    expect(t.calls).toHaveLength(1);
    expect(t.answerOf('dup')).toHaveLength(0);
    t.calls[0]?.resolve({ status: 201, headers: {}, body: Buffer.from('made') });
    await settle();
    t.send('dup', 'POST');
    await settle();
    expect(t.calls).toHaveLength(1);
    const answers = t.answerOf('dup');
    expect(answers).toHaveLength(2);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]?.status).toBe(201);
  });

  it('refuses a repeat whose answer is no longer kept', async () => {
    const t = setup({ auto: true, maxRetainedAnswerBytes: 600 });
    t.send('old');
    t.send('new');
    await settle();
    t.send('old');
    await settle();
    expect(t.calls).toHaveLength(2);
    expect(t.errorCode(t.answerOf('old')[1])).toBe('duplicate_request');
    expect(t.answerOf('old')[1]?.status).toBe(409);
  });

  it('aborts a forward after 30 s: a safe request answers 504 forward_timeout, an unsafe one 504 indeterminate', async () => {
    const t = setup({ heartbeatIntervalMs: 60_000 });
    t.send('get', 'GET');
    t.send('post', 'POST');
    await settle();
    for (const call of t.calls) call.signal.addEventListener('abort', () => call.reject(new Error('aborted')));
    await t.clock.advance(29_999);
    expect(t.responses()).toHaveLength(0);
    await t.clock.advance(1);
    expect(t.errorCode(t.answerOf('get')[0])).toBe('forward_timeout');
    expect(t.answerOf('get')[0]?.headers['x-sandcast-bridge-retryable']).toBe('true');
    expect(t.answerOf('post')[0]?.status).toBe(504);
    expect(t.errorCode(t.answerOf('post')[0])).toBe('indeterminate');
    expect(t.answerOf('post')[0]?.headers['x-sandcast-bridge-retryable']).toBe('false');
    expect(t.calls).toHaveLength(2);
  });

  it('answers within 32 s even when the forwarder ignores its signal, and ignores a late answer', async () => {
    const t = setup({ heartbeatIntervalMs: 60_000 });
    t.send('slow', 'PUT');
    await settle();
    await t.clock.advance(31_999);
    expect(t.calls[0]?.signal.aborted).toBe(true);
    expect(t.responses()).toHaveLength(0);
    await t.clock.advance(1);
    expect(t.errorCode(t.answerOf('slow')[0])).toBe('indeterminate');
    t.calls[0]?.resolve({ status: 200, headers: {}, body: new Uint8Array() });
    await settle();
    expect(t.answerOf('slow')).toHaveLength(1);
  });

  it('answers a failed forward: retryable for a safe request or one certainly not sent, indeterminate otherwise', async () => {
    const t = setup();
    t.send('g', 'GET');
    t.send('p', 'POST');
    t.send('n', 'DELETE');
    await settle();
    t.calls[0]?.reject(new Error('reset'));
    t.calls[1]?.reject(new Error('reset'));
    t.calls[2]?.reject(Object.assign(new Error('refused'), { notSent: true }));
    await settle();
    expect(t.errorCode(t.answerOf('g')[0])).toBe('forward_failed');
    expect(t.errorCode(t.answerOf('p')[0])).toBe('indeterminate');
    expect(t.errorCode(t.answerOf('n')[0])).toBe('forward_failed');
  });

  it('counts a policy refusal from the forwarder under its code', async () => {
    const outcomes: string[] = [];
    const t = setup({
      telemetry: {
        channelOpened: () => undefined,
        channelFellBack: () => undefined,
        channelLost: () => undefined,
        requestFinished: (_transport, outcome) => outcomes.push(outcome),
      },
      forward: async () => refusalAnswer('route_not_allowed'),
    });
    t.send('nope', 'DELETE');
    await settle();
    expect(t.answerOf('nope')[0]?.status).toBe(403);
    expect(t.errorCode(t.answerOf('nope')[0])).toBe('route_not_allowed');
    expect(outcomes).toEqual(['route_not_allowed']);
  });

  it('refuses an answer too large for a frame', async () => {
    const t = setup({ maxFrameBytes: 1000 });
    t.send('big');
    await settle();
    t.calls[0]?.resolve({ status: 200, headers: {}, body: new Uint8Array(2000) });
    await settle();
    expect(t.errorCode(t.answerOf('big')[0])).toBe('response_too_large');
  });

  it('answers a malformed request whose id is readable, and ignores the unreadable', async () => {
    const t = setup();
    t.input.push('{"version":1,"type":"request","id":"m","method":"get","path":"/","headers":{},"body":""}\n');
    t.input.push('garbage\n');
    t.input.push(encodeFrame({ version: 1, type: 'request', id: 'i'.repeat(257), method: 'GET', path: '/', headers: {}, body: '' }));
    await settle();
    expect(t.errorCode(t.answerOf('m')[0])).toBe('malformed_request');
    expect(t.calls).toHaveLength(0);
    expect(t.responses()).toHaveLength(1);
    expect(t.broker.stats().decodeErrors).toBe(3);
  });

  it('sends a heartbeat every 5 s and stays open while the gateway sends its own', async () => {
    const t = setup();
    for (let i = 0; i < 6; i++) {
      await t.clock.advance(5_000);
      t.input.push('{"version":1,"type":"heartbeat"}\n');
    }
    await settle();
    expect(t.sink.frames().filter((f) => f.type === 'heartbeat')).toHaveLength(6);
    expect(t.end()).toBeUndefined();
  });

  it('is lost once after three silent intervals, aborting what is in flight and replaying nothing', async () => {
    const t = setup();
    t.send('p', 'POST');
    await settle();
    await t.clock.advance(14_999);
    expect(t.end()).toBeUndefined();
    await t.clock.advance(5_001);
    expect(t.end()).toEqual({
      kind: 'lost',
      event: 'duplex_channel_lost',
      lossClass: 'heartbeat_timeout',
      pendingSafe: 0,
      pendingUnsafe: 1,
    });
    expect(t.calls[0]?.signal.aborted).toBe(true);
    expect(t.sink.ended).toBe(true);
    t.input.push(encodeFrame({ version: 1, type: 'request', id: 'late', method: 'GET', path: '/', headers: {}, body: '' }));
    await t.clock.advance(60_000);
    expect(t.calls).toHaveLength(1);
    expect(t.clock.pendingTimers).toBe(0);
  });

  it('is lost when the stream ends or fails, and when a write fails', async () => {
    const ended = setup();
    ended.input.end();
    await settle();
    expect(ended.end()).toMatchObject({ kind: 'lost', lossClass: 'stream_ended' });
    const failed = setup();
    failed.input.fail(new Error('attach broke'));
    await settle();
    expect(failed.end()).toMatchObject({ kind: 'lost', lossClass: 'stream_error' });
    const t = setup({ auto: true });
    t.sink.end();
    t.send('a');
    await settle();
    expect(t.end()).toMatchObject({ kind: 'lost', lossClass: 'write_failed' });
  });

  it('close(): unsafe requests in flight answer 504 indeterminate, safe ones 503 retryable, then the channel ends', async () => {
    const t = setup();
    t.send('read', 'GET');
    t.send('write', 'POST');
    await settle();
    t.broker.close('kill_switch');
    await settle();
    expect(t.errorCode(t.answerOf('write')[0])).toBe('indeterminate');
    expect(t.answerOf('write')[0]?.status).toBe(504);
    expect(t.errorCode(t.answerOf('read')[0])).toBe('bridge_closed');
    expect(t.answerOf('read')[0]?.status).toBe(503);
    expect(t.sink.frames().at(-1)).toEqual({ version: 1, type: 'error', code: 'channel_closed' });
    expect(t.sink.ended).toBe(true);
    expect(t.calls.every((c) => c.signal.aborted)).toBe(true);
    expect(t.end()).toEqual({ kind: 'closed', reason: 'kill_switch', pendingSafe: 1, pendingUnsafe: 1 });
    t.broker.close('teardown');
    expect(t.input.released).toBe(true);
  });

  it('stops reading requests while the gateway does not read its stdin, and loses the channel if it never does', async () => {
    const clock = createManualClock();
    const input = createMemoryByteSource();
    const written = createMemoryFrameSink();
    let full = true;
    let drained: () => void = () => undefined;
    const forwarded: string[] = [];
    const broker = createDuplexBroker({
      frames: decodeStream(input),
      sink: {
        write: (line) => {
          written.write(line);
          return !full;
        },
        end: () => written.end(),
        drained: () => new Promise<void>((resolve) => (drained = resolve)),
      },
      clock,
      forward: async (request) => {
        forwarded.push(request.id);
        return { status: 200, headers: {}, body: new Uint8Array(10) };
      },
    });
    let end: ChannelEnd | undefined;
    void broker.ended.then((e) => {
      end = e;
    });
    const send = (id: string) =>
      input.push(encodeFrame({ version: 1, type: 'request', id, method: 'GET', path: '/', headers: {}, body: '' }));
    send('first');
    await settle();
    send('second');
    await settle();
    expect(forwarded).toEqual(['first']);
    full = false;
    drained();
    await settle();
    expect(forwarded).toEqual(['first', 'second']);
    full = true;
    send('third');
    await settle();
    for (let i = 0; i < 4; i++) {
      input.push('{"version":1,"type":"heartbeat"}\n');
      await clock.advance(5_000);
    }
    expect(end).toMatchObject({ kind: 'lost', lossClass: 'write_failed' });
  });

  it('stays bounded under a flood of 10,000 requests', async () => {
    const t = setup({ auto: true });
    let peak = 0;
    for (let i = 0; i < 10_000; i++) {
      t.send(`flood-${i}-${'x'.repeat(200)}`);
      if (i % 100 === 0) {
        await settle();
        peak = Math.max(peak, t.broker.stats().inFlight);
      }
    }
    await settle();
    const stats = t.broker.stats();
    expect(peak).toBeLessThanOrEqual(64);
    expect(stats.lifetimeIds).toBe(10_000);
    expect(stats.retainedBytes).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(t.responses()).toHaveLength(10_000);
  });
});
