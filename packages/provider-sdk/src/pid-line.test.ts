import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PidLineFilter, pidLineCommand } from './pid-line.ts';

const MARKER = 'test-pid=';

function run(chunks: string[], end = false): { pid: number | null; out: string } {
  let out = '';
  const filter = new PidLineFilter(MARKER, (chunk) => {
    out += chunk.toString('latin1');
  });
  for (const chunk of chunks) filter.push(Buffer.from(chunk, 'latin1'));
  if (end) filter.flush();
  return { pid: filter.pid, out };
}

describe('the pid-line wrapper', () => {
  it('the command runs under the printed pid, with its arguments as given', () => {
    const [file, ...args] = pidLineCommand(MARKER, { toStderr: false, name: 'wrapped' }, ['sh', '-c', 'echo "$$ $1"', 'x', 'a b']);
    const stdout = execFileSync(file!, args, { encoding: 'latin1' });
    const { pid, out } = run([stdout]);
    expect(pid).toBeGreaterThan(0);
    expect(out).toBe(`${pid} a b\n`);
  });

  it("the pid line split over chunks, and ended by a terminal's \\r\\n, is stripped", () => {
    expect(run([`${MARKER}12`, '3\r', '\nprompt$ '])).toEqual({ pid: 123, out: 'prompt$ ' });
  });

  it('a first line that is not the marker passes through untouched and gives no pid', () => {
    expect(run(['error: no such directory\nmore\n'])).toEqual({ pid: null, out: 'error: no such directory\nmore\n' });
    expect(run([`${MARKER}not-a-number\nrest`])).toEqual({ pid: null, out: 'rest' });
  });

  it('a head without a newline is held only up to a bound, and given back at the end', () => {
    const long = 'x'.repeat(200);
    expect(run([long])).toEqual({ pid: null, out: long });
    expect(run(['short'])).toEqual({ pid: null, out: '' });
    expect(run(['short'], true)).toEqual({ pid: null, out: 'short' });
    // NUL and high bytes pass as they came.
    expect(run(['\0\xff\n\0'])).toEqual({ pid: null, out: '\0\xff\n\0' });
  });
});
