import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createFrameDecoder, encodeFrame } from './codec.ts';
import type { DecodeResult } from './frames.ts';

/** The shared test vectors (packages/bridge/vectors, described in the README); the C gateway runs them too. */
interface Vector {
  name: string;
  max_frame_bytes?: number;
  chunks: string[];
  expect: ({ frame: object; line: string } | { error: string })[];
}

const dir = new URL('../vectors/', import.meta.url);
const files = readdirSync(dir).filter((name) => name.endsWith('.json'));

const run = (vector: Vector): DecodeResult[] => {
  const decoder = createFrameDecoder(vector.max_frame_bytes ? { maxFrameBytes: vector.max_frame_bytes } : {});
  const out = vector.chunks.flatMap((chunk) => decoder.push(Buffer.from(chunk, 'base64')));
  return [...out, ...decoder.end()];
};

describe('the shared codec vectors', () => {
  it('exist, and keep to the fields the README lists (so a C runner needs nothing else)', () => {
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const file of files) {
      const content = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as { description: unknown; vectors: Record<string, unknown>[] };
      expect(Object.keys(content).sort()).toEqual(['description', 'vectors']);
      for (const vector of content.vectors) {
        for (const key of Object.keys(vector)) expect(['name', 'max_frame_bytes', 'chunks', 'expect']).toContain(key);
        for (const e of vector.expect as Record<string, unknown>[])
          expect(Object.keys(e).sort()).toEqual('error' in e ? ['error'] : ['frame', 'line']);
      }
    }
  });

  for (const file of files) {
    const { vectors } = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as { vectors: Vector[] };
    describe(file, () => {
      for (const vector of vectors) {
        it(vector.name, () => {
          const results = run(vector);
          expect(results.map((r) => ('frame' in r ? { frame: r.frame } : { error: r.error }))).toEqual(
            vector.expect.map((e) => ('frame' in e ? { frame: e.frame } : { error: e.error })),
          );
          results.forEach((result, i) => {
            const expected = vector.expect[i];
            if ('frame' in result && expected && 'line' in expected) expect(encodeFrame(result.frame)).toBe(`${expected.line}\n`);
          });
        });
      }
    });
  }
});
