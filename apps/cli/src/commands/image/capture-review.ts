import { createInterface } from 'node:readline/promises';
import type { CliContext } from '../../context.ts';
import { CommandFailed } from '../../format.ts';
import { renderSecretWarnings } from './render.ts';

interface ReviewOptions {
  /** --yes: capture even with warnings, without asking. */
  yes: boolean;
  /** Where the question is asked; default the process's own stdin (asked only when it is a terminal). */
  input?: NodeJS.ReadableStream & { isTTY?: boolean };
}

/**
 * Before a capture: the review's likely secrets, then a question when a person is at the terminal.
 * Without a terminal and without --yes, warnings refuse the capture (a script must opt in).
 */
export async function confirmCaptureReview(ctx: CliContext, sessionId: string, target: string, options: ReviewOptions): Promise<void> {
  const review = await ctx.client.customImages.changes(sessionId);
  if (review.warnings.length === 0) return;
  process.stderr.write(`${renderSecretWarnings(review.warnings)}\n`);
  if (options.yes) return;
  const fix = `the setup session is still running: remove them (sandcast image exec ${target} -- rm <file>), or pass --yes to capture anyway`;
  const input = options.input ?? process.stdin;
  if (!input.isTTY) throw new CommandFailed(`not captured: the capture review found ${review.warnings.length} likely secret(s); ${fix}`);
  const prompt = createInterface({ input, output: process.stderr, terminal: false });
  try {
    const answer = await prompt.question('Capture anyway? [y/N] ');
    if (!/^y(es)?$/i.test(answer.trim())) throw new CommandFailed(`not captured; ${fix}`);
  } finally {
    prompt.close();
  }
}
