import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  AGENT_FRAME,
  AgentDecoder,
  type AgentEvent,
  MAX_AGENT_PAYLOAD,
  MAX_HOST_PAYLOAD,
  STDIN_WINDOW,
  spawnFrame,
} from './agent-protocol.ts';

function frame(type: number, id: number, payload: Buffer = Buffer.alloc(0), length = payload.length + 5): Buffer {
  const header = Buffer.alloc(9);
  header.writeUInt32LE(length, 0);
  header.writeUInt8(type, 4);
  header.writeUInt32LE(id, 5);
  return Buffer.concat([header, payload]);
}

const u32 = (value: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value, 0);
  return b;
};

function decoder() {
  const events: AgentEvent[] = [];
  const errors: string[] = [];
  const d = new AgentDecoder(
    (e) => events.push(e),
    (r) => errors.push(r),
  );
  return { d, events, errors };
}

describe('exec agent decoder', () => {
  it('decodes each frame type, across arbitrary chunk boundaries', () => {
    const stream = Buffer.concat([
      frame(AGENT_FRAME.ready, 0, u32(7)),
      frame(AGENT_FRAME.started, 3, u32(42)),
      frame(AGENT_FRAME.stdout, 3, Buffer.from('out')),
      frame(AGENT_FRAME.stderr, 3, Buffer.from('err')),
      frame(AGENT_FRAME.stdinAck, 3, u32(5)),
      frame(AGENT_FRAME.exit, 3, u32(137)),
      frame(AGENT_FRAME.failed, 4, Buffer.from('fork: no\u0007')),
    ]);
    const { d, events, errors } = decoder();
    for (let i = 0; i < stream.length; i++) d.push(stream.subarray(i, i + 1));
    expect(errors).toEqual([]);
    expect(events).toEqual([
      { type: 'ready', pid: 7 },
      { type: 'started', id: 3, pid: 42 },
      { type: 'stdout', id: 3, data: Buffer.from('out') },
      { type: 'stderr', id: 3, data: Buffer.from('err') },
      { type: 'stdinAck', id: 3, bytes: 5 },
      { type: 'exit', id: 3, code: 137 },
      // Control characters from inside never reach a host log as they are.
      { type: 'failed', id: 4, message: 'fork: no?' },
    ]);
  });

  it('refuses a frame larger than the limit from its header alone, without buffering it', () => {
    const { d, events, errors } = decoder();
    d.push(frame(AGENT_FRAME.stdout, 1, Buffer.alloc(0), MAX_AGENT_PAYLOAD + 6).subarray(0, 9));
    expect(errors).toEqual([`the exec agent sent a frame of ${MAX_AGENT_PAYLOAD + 6} bytes`]);
    // Broken for good: later data is ignored, even a valid frame.
    d.push(frame(AGENT_FRAME.exit, 1, u32(0)));
    expect(events).toEqual([]);
    expect(errors).toHaveLength(1);
  });

  it('accepts the largest output frame', () => {
    const { d, events, errors } = decoder();
    d.push(frame(AGENT_FRAME.stdout, 1, Buffer.alloc(MAX_AGENT_PAYLOAD, 1)));
    expect(errors).toEqual([]);
    expect(events).toHaveLength(1);
  });

  it.each([
    ['a length below the header', frame(AGENT_FRAME.exit, 1, Buffer.alloc(0), 4)],
    ['an unknown type', frame(200, 1)],
    ['an exit code above 255', frame(AGENT_FRAME.exit, 1, u32(256))],
    ['an exit without its code', frame(AGENT_FRAME.exit, 1, Buffer.from([1, 2]))],
    ['a started frame with pid 0', frame(AGENT_FRAME.started, 1, u32(0))],
    ['a ready frame for an exec id', frame(AGENT_FRAME.ready, 9, u32(1))],
    ['an acknowledgement beyond the window', frame(AGENT_FRAME.stdinAck, 1, u32(STDIN_WINDOW + 1))],
    ['an oversized failure text', frame(AGENT_FRAME.failed, 1, Buffer.alloc(2000, 65))],
  ])('reports %s once and stops', (_name, bytes) => {
    const { d, events, errors } = decoder();
    d.push(bytes);
    d.push(bytes);
    expect(events).toEqual([]);
    expect(errors).toHaveLength(1);
  });

  it('never throws on random garbage, and buffers at most one frame', () => {
    for (let round = 0; round < 200; round++) {
      const { d } = decoder();
      expect(() => {
        for (let i = 0; i < 20; i++) d.push(randomBytes(1 + Math.floor(Math.random() * 300)));
      }).not.toThrow();
      expect((d as unknown as { pending: Buffer }).pending.length).toBeLessThanOrEqual(MAX_AGENT_PAYLOAD + 9);
    }
  });

  it('keeps a truncated frame pending until the rest arrives', () => {
    const { d, events, errors } = decoder();
    const whole = frame(AGENT_FRAME.stdout, 2, Buffer.from('abcdef'));
    d.push(whole.subarray(0, 11));
    expect(events).toEqual([]);
    d.push(whole.subarray(11));
    expect(events).toEqual([{ type: 'stdout', id: 2, data: Buffer.from('abcdef') }]);
    expect(errors).toEqual([]);
  });
});

describe('spawn frames', () => {
  it('lays out counts, cwd, argv and env as NUL-terminated strings', () => {
    const bytes = spawnFrame(5, { cwd: '/w', command: ['sh', '-c', 'x'], env: { A: 'b=c' } })!;
    expect(bytes.readUInt32LE(0)).toBe(bytes.length - 4);
    expect(bytes.readUInt8(4)).toBe(1);
    expect(bytes.readUInt32LE(5)).toBe(5);
    expect(bytes.readUInt32LE(9)).toBe(3);
    expect(bytes.readUInt32LE(13)).toBe(1);
    expect(bytes.subarray(17).toString()).toBe('/w\0sh\0-c\0x\0A=b=c\0');
  });

  it('cannot carry a NUL, an empty command or more than the agent accepts (those run the old way)', () => {
    expect(spawnFrame(1, { cwd: '/', command: ['a\0b'], env: {} })).toBeNull();
    expect(spawnFrame(1, { cwd: '/', command: ['true'], env: { K: 'v\0' } })).toBeNull();
    expect(spawnFrame(1, { cwd: '/', command: [], env: {} })).toBeNull();
    expect(spawnFrame(1, { cwd: '/', command: ['echo', 'x'.repeat(MAX_HOST_PAYLOAD)], env: {} })).toBeNull();
  });
});
