/** The figures every benchmark prints: percentiles, a timer, one aligned row with its ratio to a baseline. */

/** Nearest-rank percentile (p in 0..100) of `values`; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** Milliseconds `fn` took. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** `label   p50 … ms   p95 … ms   ×ratio` — the ratio of p50 to the baseline's p50, measured in the same run. */
export function row(label: string, values: readonly number[], baseline?: readonly number[]): string {
  const p50 = percentile(values, 50);
  const ratio = baseline ? `  ×${(p50 / percentile(baseline, 50)).toFixed(2)}` : '';
  return `${label.padEnd(56)} p50 ${p50.toFixed(1).padStart(8)} ms   p95 ${percentile(values, 95).toFixed(1).padStart(8)} ms${ratio}`;
}
