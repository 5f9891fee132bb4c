import { describe, expect, it } from 'vitest';
import { ReplayBuffer } from './replay-buffer.ts';

describe('ReplayBuffer', () => {
  it('keeps exactly the last capacity bytes, across chunk boundaries', () => {
    const buffer = new ReplayBuffer(10);
    buffer.push(Buffer.from('abc'));
    expect(buffer.snapshot().toString()).toBe('abc');
    buffer.push(Buffer.from('defghij'));
    expect(buffer.snapshot().toString()).toBe('abcdefghij');
    buffer.push(Buffer.from('klm'));
    expect(buffer.snapshot().toString()).toBe('defghijklm');
    buffer.push(Buffer.from('0123456789ABC'));
    expect(buffer.snapshot().toString()).toBe('3456789ABC');
    for (let i = 0; i < 100; i++) buffer.push(Buffer.from(String(i % 10)));
    expect(buffer.snapshot().toString()).toBe('0123456789');
  });
});
