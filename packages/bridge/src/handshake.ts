import { randomBytes, timingSafeEqual } from 'node:crypto';
import { type Clock, systemClock } from './clock.ts';
import { createFrameDecoder } from './codec.ts';
import type { DecodeResult } from './frames.ts';

/** Why a duplex channel did not become ready; the bridge then runs on the file bridge. */
export const HANDSHAKE_FAILURES = [
  'ready_timeout',
  'ready_nonce_mismatch',
  'contaminated',
  'ready_invalid',
  'channel_open_failed',
] as const;
export type HandshakeFailure = (typeof HANDSHAKE_FAILURES)[number];

export const READY_TIMEOUT_MS = 10_000;
/** Bytes of other lines tolerated before READY (a shell banner, a warning). */
export const MAX_PRE_READY_BYTES = 8 * 1024;

export type HandshakeResult = { ready: true; frames: AsyncIterable<DecodeResult> } | { ready: false; reason: HandshakeFailure };

/** The host's nonce for one channel: 16 random bytes as 32 lowercase hex digits. */
export function createNonce(): string {
  return randomBytes(16).toString('hex');
}

function sameNonce(got: string, expected: string): boolean {
  const a = Buffer.from(got);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface HandshakeOptions {
  /** The gateway's stdout. */
  input: AsyncIterable<Uint8Array>;
  /** The nonce the host started the gateway with. */
  nonce: string;
  clock?: Clock;
  timeoutMs?: number;
  maxPreReadyBytes?: number;
  maxFrameBytes?: number;
}

/**
 * Reads the gateway's output until its READY frame, and hands back the frames that follow it
 * (those already read in the same chunk first), decoded by the same decoder. Lines before READY
 * are skipped up to `maxPreReadyBytes`. Any failure releases the input (`return()` on its
 * iterator) and names its reason; no request is read or answered before READY.
 */
export async function awaitReady(options: HandshakeOptions): Promise<HandshakeResult> {
  const clock = options.clock ?? systemClock;
  const maxPreReady = options.maxPreReadyBytes ?? MAX_PRE_READY_BYTES;
  const decoder = createFrameDecoder(options.maxFrameBytes ? { maxFrameBytes: options.maxFrameBytes } : {});
  const iterator = options.input[Symbol.asyncIterator]();
  const release = () => {
    try {
      void iterator.return?.()?.catch(() => undefined);
    } catch {
      // The stream is being given up; how it ends does not matter.
    }
  };
  const fail = (reason: HandshakeFailure): HandshakeResult => {
    release();
    return { ready: false, reason };
  };
  let timer: unknown;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = clock.setTimeout(() => resolve('timeout'), options.timeoutMs ?? READY_TIMEOUT_MS);
  });
  let preReady = 0;
  try {
    for (;;) {
      const step = await Promise.race([
        iterator.next().then(
          (value) => ({ value }),
          () => ({ failed: true as const }),
        ),
        timedOut,
      ]);
      if (step === 'timeout') return fail('ready_timeout');
      if ('failed' in step || step.value.done) return fail('channel_open_failed');
      const results = decoder.push(step.value.value);
      for (let i = 0; i < results.length; i++) {
        const result = results[i] as DecodeResult;
        if ('frame' in result && result.frame.type === 'ready') {
          if (!sameNonce(result.frame.nonce, options.nonce)) return fail('ready_nonce_mismatch');
          return { ready: true, frames: rest(results.slice(i + 1), iterator, decoder) };
        }
        if ('error' in result && result.type === 'ready') return fail('ready_invalid');
        // The gateway's refusal to start, `bind_failed` above all.
        if ('frame' in result && result.frame.type === 'error') return fail('channel_open_failed');
        preReady += result.bytes;
        if (preReady > maxPreReady) return fail('contaminated');
      }
      if (preReady + decoder.bufferedBytes > maxPreReady) return fail('contaminated');
    }
  } finally {
    clock.clearTimeout(timer);
  }
}

/** Decodes a byte stream into frames and refusals, ending with what a cut-off last line gives. */
export function decodeStream(input: AsyncIterable<Uint8Array>, options: { maxFrameBytes?: number } = {}): AsyncIterable<DecodeResult> {
  return rest([], input[Symbol.asyncIterator](), createFrameDecoder(options));
}

/**
 * The decoded frames of `iterator`, after `already`. Giving the result up (`return()`) gives the
 * byte stream up at once, even while a read is pending.
 */
function rest(
  already: DecodeResult[],
  iterator: AsyncIterator<Uint8Array>,
  decoder: ReturnType<typeof createFrameDecoder>,
): AsyncIterable<DecodeResult> {
  let queue = already;
  let at = 0;
  let finished = false;
  const iterable: AsyncIterator<DecodeResult> = {
    async next() {
      for (;;) {
        if (at < queue.length) return { done: false, value: queue[at++] as DecodeResult };
        if (finished) return { done: true, value: undefined };
        const step = await iterator.next();
        if (finished) return { done: true, value: undefined };
        queue = step.done ? decoder.end() : decoder.push(step.value);
        at = 0;
        if (step.done) finished = true;
      }
    },
    async return() {
      finished = true;
      queue = [];
      await iterator.return?.();
      return { done: true, value: undefined };
    },
  };
  return { [Symbol.asyncIterator]: () => iterable };
}
