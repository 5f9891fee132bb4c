import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFrameDecoder, encodeFrame } from './codec.ts';
import { gatewayForTests } from './gateway-test-support.ts';

/*
 * The gateway's C decoder against the shared vectors (vectors/README in packages/bridge/README.md)
 * and, differentially, against the TypeScript decoder on random input: both must turn the same
 * bytes into the same frames (the same canonical lines) and the same refusal codes.
 */

interface Vector {
  name: string;
  max_frame_bytes?: number;
  chunks: string[];
  expect: ({ frame: object; line: string } | { error: string })[];
}
type Outcome = { line: string } | { error: string };

/** Runs `decode` mode over `chunks` (each written on its own) and parses what it printed. */
function decodeInC(chunks: Uint8Array[], maxFrameBytes?: number): Promise<Outcome[]> {
  const args = ['decode', ...(maxFrameBytes ? ['--max-frame-bytes', String(maxFrameBytes)] : [])];
  const child = spawn(gatewayForTests(), args, { stdio: 'pipe' });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    out += text;
  });
  for (const chunk of chunks) child.stdin.write(chunk);
  child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`decode exited ${code}`));
      const lines = out.split('\n').filter((line) => line !== '');
      resolve(lines.map((line) => (line.startsWith('F ') ? { line: line.slice(2) } : { error: line.slice(2) })));
    });
  });
}

function decodeInTs(chunks: Uint8Array[], maxFrameBytes?: number): Outcome[] {
  const decoder = createFrameDecoder(maxFrameBytes ? { maxFrameBytes } : {});
  const results = [...chunks.flatMap((chunk) => decoder.push(chunk)), ...decoder.end()];
  return results.map((r) => ('frame' in r ? { line: encodeFrame(r.frame).slice(0, -1) } : { error: r.error }));
}

const dir = new URL('../vectors/', import.meta.url);
const files = readdirSync(dir).filter((name) => name.endsWith('.json'));

describe('the gateway decodes the shared vectors', () => {
  it('finds the vectors', () => {
    expect(files.length).toBeGreaterThanOrEqual(4);
  });
  for (const file of files) {
    const { vectors } = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as { vectors: Vector[] };
    describe(file, () => {
      for (const vector of vectors) {
        it(vector.name, async () => {
          const got = await decodeInC(
            vector.chunks.map((chunk) => Buffer.from(chunk, 'base64')),
            vector.max_frame_bytes,
          );
          expect(got).toEqual(vector.expect.map((e) => ('error' in e ? { error: e.error } : { line: e.line })));
          for (const [i, outcome] of got.entries()) {
            const expected = vector.expect[i];
            if ('line' in outcome && expected && 'frame' in expected) expect(JSON.parse(outcome.line)).toEqual(expected.frame);
          }
        });
      }
    });
  }
});

describe('the gateway and the TypeScript codec agree on random input', () => {
  const CAP = 300;
  // Lines that are nearly frames: real frames with a field changed, plus plain noise.
  const nearFrame = fc
    .record({
      version: fc.oneof(fc.constant(1), fc.constant(2), fc.constant('1'), fc.double()),
      type: fc.constantFrom('ready', 'request', 'response', 'heartbeat', 'error', 'nope', 7),
      id: fc.oneof(fc.string({ maxLength: 8 }), fc.constant('x'.repeat(257)), fc.integer()),
      method: fc.constantFrom('GET', 'post', 'PUT'),
      path: fc.constantFrom('/a', 'b', '/ü'),
      headers: fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 3 }), fc.constant([])),
      body: fc.constantFrom('', 'aGk=', 'aGk', '!!!!'),
      status: fc.oneof(fc.integer({ min: 90, max: 610 }), fc.constant(200.5)),
      code: fc.constantFrom('bind_failed', 'Bad', ''),
      nonce: fc.string({ maxLength: 40 }),
      message: fc.string({ maxLength: 10, unit: 'binary' }),
    })
    .chain((all) =>
      fc.subarray(Object.keys(all)).map((keys) => JSON.stringify(Object.fromEntries(keys.map((k) => [k, all[k as keyof typeof all]])))),
    );
  const line = fc.oneof(nearFrame, fc.string({ maxLength: 400, unit: 'binary' }), fc.constant('{"version":1,"type":"heartbeat"}'));
  const input = fc.tuple(
    fc.array(
      fc.oneof(
        line.map((l) => Buffer.from(`${l}\n`)),
        fc.uint8Array({ maxLength: 50 }).map((b) => Buffer.from(b)),
      ),
      {
        maxLength: 12,
      },
    ),
    fc.array(fc.nat(), { maxLength: 6 }),
  );

  it('the same frames and the same refusals, in order, for any bytes in any split', async () => {
    await fc.assert(
      fc.asyncProperty(input, async ([parts, cuts]) => {
        const data = Buffer.concat(parts);
        const points = [...new Set(cuts.map((c) => (data.length ? c % data.length : 0)))].sort((a, b) => a - b);
        const chunks = [...points, data.length].map((end, i) => data.subarray(i === 0 ? 0 : (points[i - 1] as number), end));
        expect(await decodeInC(chunks, CAP)).toEqual(decodeInTs(chunks, CAP));
      }),
      { numRuns: 150 },
    );
  });
});
