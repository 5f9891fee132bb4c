import type { ProgressListener } from '@sandcast/client';

/**
 * Shows "Capturing template… 12 s" on stderr while `work` runs: one line rewritten every second on
 * a terminal, the label once (and the time taken at the end) when stderr is a pipe or file, nothing
 * in --json mode. Resolves or rejects with `work`.
 */
export async function withProgress<T>(label: string, work: Promise<T>, options: { quiet?: boolean } = {}): Promise<T> {
  if (options.quiet) return work;
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  const tty = process.stderr.isTTY === true;
  let timer: NodeJS.Timeout | undefined;
  if (tty) {
    const draw = () => process.stderr.write(`\r${label}… ${seconds()} s `);
    draw();
    timer = setInterval(draw, 1000);
  } else {
    process.stderr.write(`${label}…\n`);
  }
  let outcome = 'failed';
  try {
    const value = await work;
    outcome = 'done';
    return value;
  } finally {
    if (timer) clearInterval(timer);
    process.stderr.write(`${tty ? '\r' : ''}${label}… ${outcome} after ${seconds()} s\n`);
  }
}

/** Progress on stderr, one line rewritten in place on a terminal. */
export function progressPrinter(label: string): ProgressListener & { done(): void } {
  const started = Date.now();
  const tty = process.stderr.isTTY;
  const listener = ((p: { phase: string; fraction?: number | undefined }) => {
    const pct = p.fraction === undefined ? '' : ` ${Math.round(p.fraction * 100)}%`;
    const line = `${label}: ${p.phase}${pct} (${Math.round((Date.now() - started) / 1000)} s)`;
    process.stderr.write(tty ? `\r\x1b[K${line}` : `${line}\n`);
  }) as ProgressListener & { done(): void };
  listener.done = () => {
    if (tty) process.stderr.write('\n');
  };
  return listener;
}
