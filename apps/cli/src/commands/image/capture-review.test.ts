import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CliContext } from '../../context.ts';
import { CommandFailed } from '../../format.ts';
import { confirmCaptureReview } from './capture-review.ts';

function contextWith(warnings: Array<{ path: string; reason: string; line?: number }>): CliContext {
  const client = { customImages: { changes: async () => ({ changes: [], warnings, totalBytes: 0, truncated: false }) } };
  return { client, json: false, print: () => {} } as unknown as CliContext;
}

/** A terminal that answers `reply` to the question. */
function terminal(reply: string): PassThrough & { isTTY: boolean } {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  input.end(`${reply}\n`);
  return input;
}

describe('confirmCaptureReview', () => {
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  afterEach(() => stderr.mockClear());
  const warned = contextWith([{ path: '/root/.env', reason: 'GitHub token (ghp_/gho_/…)', line: 3 }]);

  it('at a terminal, asks and captures on "y"', async () => {
    await expect(confirmCaptureReview(warned, 's1', 'build', { yes: false, input: terminal('y') })).resolves.toBeUndefined();
    const written = stderr.mock.calls.map((c) => String(c[0])).join('');
    expect(written).toContain('/root/.env:3: GitHub token');
    expect(written).toContain('Capture anyway? [y/N]');
  });

  it('at a terminal, anything but yes refuses', async () => {
    await expect(confirmCaptureReview(warned, 's1', 'build', { yes: false, input: terminal('') })).rejects.toThrow(CommandFailed);
    await expect(confirmCaptureReview(warned, 's1', 'build', { yes: false, input: terminal('nope') })).rejects.toThrow(/not captured/);
  });

  it('--yes captures without asking; no warnings asks nothing', async () => {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    await expect(confirmCaptureReview(warned, 's1', 'build', { yes: true, input })).resolves.toBeUndefined();
    await expect(confirmCaptureReview(contextWith([]), 's1', 'build', { yes: false, input })).resolves.toBeUndefined();
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).not.toContain('Capture anyway');
  });
});
