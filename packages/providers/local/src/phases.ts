/**
 * Where a create's time goes (ADR 0034): an opt-in sink the provider reports each step of a
 * sandbox start to, with its wall time. Steps that run side by side report their own spans, so
 * the figures of one create can add up to more than its total. Nothing is measured without a sink.
 */
export type PhaseSink = (phase: string, ms: number) => void;

/** Runs `work`, reporting its duration to `sink` (when there is one) under `phase`, failed or not. */
export async function timed<T>(sink: PhaseSink | undefined, phase: string, work: () => Promise<T>): Promise<T> {
  if (!sink) return work();
  const started = performance.now();
  try {
    return await work();
  } finally {
    sink(phase, performance.now() - started);
  }
}
