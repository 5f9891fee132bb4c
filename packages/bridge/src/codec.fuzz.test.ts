import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkRequestObject, createFrameDecoder, encodeFrame } from './codec.ts';
import { DECODE_ERROR_CODES, type Frame } from './frames.ts';

/** Splits `data` at the given cut points (taken modulo its length). */
function split(data: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => (data.length === 0 ? 0 : c % data.length)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const p of points) {
    out.push(data.subarray(at, p));
    at = p;
  }
  out.push(data.subarray(at));
  return out;
}

const CAP = 512;
const codes = new Set<string>(DECODE_ERROR_CODES);

/** Feeds every chunk, checking after each that nothing threw and at most the cap is held. */
function feed(chunks: Uint8Array[]) {
  const decoder = createFrameDecoder({ maxFrameBytes: CAP });
  const results = [];
  for (const chunk of chunks) {
    results.push(...decoder.push(chunk));
    expect(decoder.bufferedBytes).toBeLessThanOrEqual(CAP);
  }
  results.push(...decoder.end());
  for (const r of results) if ('error' in r) expect(codes.has(r.error)).toBe(true);
  return results;
}

const text = fc.string({ maxLength: 40, unit: 'binary' });
const id = fc.string({ minLength: 1, maxLength: 20, unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });
const headers = fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), text, { maxKeys: 4 });
const body = fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString('base64'));
const frame: fc.Arbitrary<Frame> = fc.oneof(
  fc.record({ version: fc.constant(1 as const), type: fc.constant('ready' as const), nonce: fc.stringMatching(/^[0-9a-f]{0,32}$/) }),
  fc.record({
    version: fc.constant(1 as const),
    type: fc.constant('request' as const),
    id,
    method: fc.constantFrom('GET', 'POST', 'DELETE'),
    path: text.map((t) => `/${encodeURIComponent(t)}`),
    headers,
    body,
  }),
  fc.record({
    version: fc.constant(1 as const),
    type: fc.constant('response' as const),
    id,
    status: fc.integer({ min: 100, max: 599 }),
    headers,
    body,
  }),
  fc.constant<Frame>({ version: 1, type: 'heartbeat' }),
);

describe('the decoder under fuzzing', () => {
  it('never throws and stays bounded on random bytes split anywhere', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.array(fc.nat(), { maxLength: 12 }), (data, cuts) => {
        feed(split(data, cuts));
      }),
      { numRuns: 400, seed: 14 },
    );
  });

  it('decodes valid frames identically whatever the split', () => {
    fc.assert(
      fc.property(fc.array(frame, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 20 }), (frames, cuts) => {
        const wire = Buffer.from(frames.map(encodeFrame).join(''));
        fc.pre(frames.every((f) => Buffer.byteLength(encodeFrame(f)) - 1 <= CAP));
        const results = feed(split(wire, cuts));
        expect(results.map((r) => ('frame' in r ? encodeFrame(r.frame) : r.error))).toEqual(frames.map(encodeFrame));
      }),
      { numRuns: 300, seed: 15 },
    );
  });

  it('survives valid frames with bytes flipped, inserted and removed', () => {
    fc.assert(
      fc.property(
        fc.array(frame, { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('flip', 'insert', 'delete')), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (frames, mutations, cuts) => {
          const wire = [...Buffer.from(frames.map(encodeFrame).join(''))];
          for (const [at, value, kind] of mutations) {
            const i = at % (wire.length + 1);
            if (kind === 'insert') wire.splice(i, 0, value);
            else if (kind === 'delete') wire.splice(i, 1);
            else if (i < wire.length) wire[i] = value;
          }
          const results = feed(split(Uint8Array.from(wire), cuts));
          for (const r of results) if ('frame' in r) expect(() => encodeFrame(r.frame)).not.toThrow();
        },
      ),
      { numRuns: 400, seed: 16 },
    );
  });

  it('checks any JSON value as a file bridge request without throwing', () => {
    const requestLike = fc.record(
      { id: fc.oneof(fc.string(), fc.integer()), method: fc.string(), path: fc.string(), headers: fc.jsonValue(), body: fc.string() },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), requestLike), (value) => {
        const checked = checkRequestObject(value);
        expect('request' in checked || codes.has(checked.error)).toBe(true);
      }),
      { numRuns: 500, seed: 17 },
    );
  });
});
