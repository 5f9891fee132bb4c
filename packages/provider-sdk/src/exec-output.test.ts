import { describe, expect, it } from 'vitest';
import { collectExecOutput, ExecOutput, type ExecProcess, utf8Boundary } from './exec-output.ts';

function source() {
  const state = { paused: false, pauses: 0, resumes: 0 };
  return {
    state,
    pause: () => {
      state.paused = true;
      state.pauses++;
    },
    resume: () => {
      state.paused = false;
      state.resumes++;
    },
  };
}

describe('exec output', () => {
  it('pauses its source when the reader falls behind and resumes it when the reader reads', async () => {
    const src = source();
    const output = new ExecOutput(src);
    for (let i = 0; i < 16 && !src.state.paused; i++) output.push('stdout', Buffer.from(`chunk ${i}\n`));
    expect(src.state.paused).toBe(true);
    output.readable.read();
    await new Promise((resolve) => setImmediate(resolve));
    expect(src.state.paused).toBe(false);
  });

  it('discard() keeps the source flowing and drops what it sends', () => {
    const src = source();
    const output = new ExecOutput(src);
    for (let i = 0; i < 20; i++) output.push('stdout', Buffer.from('x'));
    expect(src.state.paused).toBe(true);
    output.discard();
    expect(src.state.paused).toBe(false);
    const queued = output.readable.readableLength;
    output.push('stdout', Buffer.from('dropped'));
    expect(output.readable.readableLength).toBe(queued);
  });

  it('collect keeps the cap per stream on a character boundary and counts everything', async () => {
    const output = new ExecOutput();
    const process: ExecProcess = {
      output: output.readable,
      exit: Promise.resolve({ exitCode: 0, timedOut: false }),
      kill: async () => undefined,
    };
    output.push('stdout', Buffer.from('ab€€', 'utf8'));
    output.push('stderr', Buffer.from('e', 'utf8'));
    output.end();
    expect(await collectExecOutput(process, { maxOutputBytes: 6 })).toEqual({
      exitCode: 0,
      timedOut: false,
      stdout: 'ab€',
      stderr: 'e',
      truncated: { stdout: true, stderr: false },
      totalBytes: { stdout: 8, stderr: 1 },
    });
  });

  it('utf8Boundary drops only an incomplete trailing sequence', () => {
    const euro = Buffer.from('€');
    expect(utf8Boundary(Buffer.from('abc'))).toBe(3);
    expect(utf8Boundary(Buffer.concat([Buffer.from('a'), euro]))).toBe(4);
    expect(utf8Boundary(Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]))).toBe(1);
    expect(utf8Boundary(Buffer.from([0xff, 0xfe]))).toBe(2);
  });
});
