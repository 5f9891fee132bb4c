/** Time as the bridge sees it: injectable, so that tests move it by hand instead of sleeping. */
export interface Clock {
  /** Milliseconds, monotonic enough for budgets (`Date.now()` by default). */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
