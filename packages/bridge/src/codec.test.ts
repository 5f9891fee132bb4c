import { describe, expect, it } from 'vitest';
import { checkRequestObject, createFrameDecoder, encodeFrame } from './codec.ts';
import type { Frame } from './frames.ts';

const bytes = (text: string) => Buffer.from(text);

describe('encodeFrame', () => {
  it('writes one canonical line that decodes back to the same frame', () => {
    const frames: Frame[] = [
      { version: 1, type: 'ready', nonce: 'ab'.repeat(16) },
      { version: 1, type: 'request', id: 'r1', method: 'POST', path: '/a', headers: { 'x-b': '1', accept: '*/*' }, body: 'YQ==' },
      { version: 1, type: 'response', id: 'r1', status: 201, headers: {}, body: '' },
      { version: 1, type: 'heartbeat' },
      { version: 1, type: 'error', code: 'indeterminate', id: 'r1', message: 'line one\nline two' },
    ];
    const decoder = createFrameDecoder();
    const lines = frames.map(encodeFrame);
    for (const line of lines) expect(line.indexOf('\n')).toBe(line.length - 1);
    const decoded = decoder.push(bytes(lines.join('')));
    expect(decoded.map((r) => ('frame' in r ? r.frame : r))).toEqual(frames);
    expect(lines[1]).toBe(
      '{"version":1,"type":"request","id":"r1","method":"POST","path":"/a","headers":{"accept":"*/*","x-b":"1"},"body":"YQ=="}\n',
    );
  });
});

describe('createFrameDecoder', () => {
  it('names the type and a valid id of a refused request, so the one request can be answered', () => {
    const [result] = createFrameDecoder().push(
      bytes('{"version":1,"type":"request","id":"r7","method":"get","path":"/","headers":{},"body":""}\n'),
    );
    expect(result).toMatchObject({ error: 'malformed_frame', type: 'request', id: 'r7' });
  });

  it('names no id when the id is what is wrong', () => {
    const [result] = createFrameDecoder().push(
      bytes(`{"version":1,"type":"request","id":"${'x'.repeat(300)}","method":"GET","path":"/","headers":{},"body":""}\n`),
    );
    expect(result).toMatchObject({ error: 'id_too_large', type: 'request' });
    expect(result && 'id' in result).toBe(false);
  });

  it('keeps at most the cap while an endless line arrives, and refuses it once', () => {
    const decoder = createFrameDecoder({ maxFrameBytes: 1000 });
    const refusals: string[] = [];
    for (let i = 0; i < 500; i++) {
      for (const r of decoder.push(Buffer.alloc(97, 0x61))) if ('error' in r) refusals.push(r.error);
      expect(decoder.bufferedBytes).toBeLessThanOrEqual(1000);
    }
    expect(refusals).toEqual(['frame_too_large']);
    expect(decoder.push(bytes('tail\n{"version":1,"type":"heartbeat"}\n'))).toEqual([
      { frame: { version: 1, type: 'heartbeat' }, bytes: 33 },
    ]);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('does not keep a reference to the caller’s buffer', () => {
    const decoder = createFrameDecoder();
    const chunk = bytes('{"version":1,"type":"heart');
    decoder.push(chunk);
    chunk.fill(0x20);
    expect(decoder.push(bytes('beat"}\n'))).toEqual([{ frame: { version: 1, type: 'heartbeat' }, bytes: 33 }]);
  });

  it('ends quietly after a complete line and refuses a cut-off one', () => {
    const decoder = createFrameDecoder();
    decoder.push(bytes('{"version":1,"type":"heartbeat"}\n'));
    expect(decoder.end()).toEqual([]);
    decoder.push(bytes('{"version":1'));
    expect(decoder.end()).toEqual([{ error: 'malformed_frame', bytes: 12 }]);
  });

  it('copes with a deeply nested line without throwing', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}\n`;
    expect(createFrameDecoder().push(bytes(deep))).toEqual([{ error: 'malformed_frame', bytes: 200_001 }]);
  });

  it('treats __proto__ as an ordinary (refused) field name', () => {
    const [result] = createFrameDecoder().push(bytes('{"version":1,"type":"heartbeat","__proto__":{"polluted":true}}\n'));
    expect(result).toMatchObject({ error: 'malformed_frame', type: 'heartbeat' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('checkRequestObject', () => {
  it('accepts the request fields alone', () => {
    expect(checkRequestObject({ id: 'a', method: 'GET', path: '/x', headers: {}, body: '' })).toEqual({
      request: { id: 'a', method: 'GET', path: '/x', headers: {}, body: '' },
    });
  });

  it('refuses version and type, unknown fields and bad values, naming a valid id', () => {
    expect(checkRequestObject({ version: 1, type: 'request', id: 'a', method: 'GET', path: '/x', headers: {}, body: '' })).toEqual({
      error: 'malformed_frame',
    });
    expect(checkRequestObject({ id: 'a', method: 'GET', path: 'x', headers: {}, body: '' })).toEqual({ error: 'malformed_frame', id: 'a' });
    expect(checkRequestObject('nope')).toEqual({ error: 'malformed_frame' });
  });
});
