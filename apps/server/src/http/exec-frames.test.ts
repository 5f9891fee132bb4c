import { describe, expect, it } from 'vitest';
import { ExecFrameEncoder } from './exec-frames.ts';

describe('exec frame encoder', () => {
  it('holds a character split across reads until it is whole, per stream', () => {
    const encoder = new ExecFrameEncoder();
    const euro = Buffer.from('€', 'utf8'); // e2 82 ac
    expect(encoder.push({ stream: 'stdout', data: Buffer.concat([Buffer.from('a'), euro.subarray(0, 1)]) })).toEqual([
      { type: 'stdout', data: 'a' },
    ]);
    // Another stream in between does not disturb the held bytes.
    expect(encoder.push({ stream: 'stderr', data: euro.subarray(0, 2) })).toEqual([]);
    expect(encoder.push({ stream: 'stdout', data: euro.subarray(1, 2) })).toEqual([]);
    expect(encoder.push({ stream: 'stdout', data: Buffer.concat([euro.subarray(2), Buffer.from('b')]) })).toEqual([
      { type: 'stdout', data: '€b' },
    ]);
    expect(encoder.push({ stream: 'stderr', data: euro.subarray(2) })).toEqual([{ type: 'stderr', data: '€' }]);
    expect(encoder.totalBytes).toEqual({ stdout: 5, stderr: 3 });
    expect(encoder.flush()).toEqual([]);
  });

  it('sends bytes that are not UTF-8 as base64, and a truncated character at the end as bytes', () => {
    const encoder = new ExecFrameEncoder();
    expect(encoder.push({ stream: 'stdout', data: Buffer.from([0x61, 0xff, 0xfe, 0x62]) })).toEqual([
      { type: 'stdout', data: Buffer.from([0x61, 0xff, 0xfe, 0x62]).toString('base64'), encoding: 'base64' },
    ]);
    expect(encoder.push({ stream: 'stderr', data: Buffer.from([0x41, 0xf0, 0x9f]) })).toEqual([{ type: 'stderr', data: 'A' }]);
    expect(encoder.flush()).toEqual([{ type: 'stderr', data: Buffer.from([0xf0, 0x9f]).toString('base64'), encoding: 'base64' }]);
  });
});
