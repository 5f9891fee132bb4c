/** How long one provider call of the lifecycle or the reconciler may take (a wedged engine must not stall them). */
export const PROVIDER_CALL_TIMEOUT_MS = 30_000;

/**
 * Rejects with a message naming `what` when `promise` takes longer than `ms` (or with the error
 * `timedOut` makes). The timer never holds the process open.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string, timedOut?: (message: string) => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const message = `${what} did not answer within ${Math.round(ms / 1000)} s`;
      reject(timedOut ? timedOut(message) : new Error(message));
    }, ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
