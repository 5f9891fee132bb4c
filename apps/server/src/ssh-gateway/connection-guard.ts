/**
 * Wraps the callbacks of one connection (SSH, WebSocket, PTY) so that a throw in one of them —
 * a library refusing an argument, a write to a stream that just closed — is reported to
 * `onFault` instead of reaching the event loop as an uncaught exception, which would end the
 * whole server. `onFault` logs and closes that connection; the others never notice.
 */
export type Guard = <A extends unknown[]>(what: string, fn: (...args: A) => unknown) => (...args: A) => void;

export function connectionGuard(onFault: (error: unknown, what: string) => void): Guard {
  const fault = (error: unknown, what: string) => {
    try {
      onFault(error, what);
    } catch {
      // The fault handler itself failed (the connection is already gone): nothing more to do.
    }
  };
  return (what, fn) =>
    (...args) => {
      try {
        const result = fn(...args);
        if (result instanceof Promise) result.catch((error: unknown) => fault(error, what));
      } catch (error) {
        fault(error, what);
      }
    };
}
