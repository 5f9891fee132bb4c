import { createInterface } from 'node:readline';

/** What the operator (or the session itself) decided while `image setup` waited. */
export type OperatorDecision =
  | { kind: 'finish' }
  | { kind: 'cancel'; why: 'interrupt' | 'end_of_input' }
  /** The session stopped waiting on its own (expired, cancelled or finished elsewhere). */
  | { kind: 'ended'; status: string };

export interface WaitOptions {
  /** Where Enter comes from: one line finishes, end of input cancels. */
  input: NodeJS.ReadableStream;
  /** Resolves when the operator interrupts (Ctrl-C). */
  interrupted: Promise<void>;
  /** The session's current status, or undefined when it cannot be read right now. */
  poll: () => Promise<string | undefined>;
  /** Default: 3000. */
  pollMs?: number;
}

const WAITING = new Set(['starting', 'waiting_for_user']);

/** Waits for Enter (finish), Ctrl-C or end of input (cancel), or the session leaving the waiting state. */
export function waitForOperator(options: WaitOptions): Promise<OperatorDecision> {
  return new Promise((resolve) => {
    // terminal: false keeps the terminal in cooked mode, so Ctrl-C stays a real SIGINT and Ctrl-D an end of input.
    const lines = createInterface({ input: options.input, terminal: false });
    let settled = false;
    const settle = (decision: OperatorDecision) => {
      if (settled) return;
      settled = true;
      clearInterval(timer);
      lines.close();
      resolve(decision);
    };
    lines.once('line', () => settle({ kind: 'finish' }));
    lines.once('close', () => settle({ kind: 'cancel', why: 'end_of_input' }));
    void options.interrupted.then(() => settle({ kind: 'cancel', why: 'interrupt' }));
    const timer = setInterval(() => {
      void options
        .poll()
        .then((status) => {
          if (status !== undefined && !WAITING.has(status)) settle({ kind: 'ended', status });
        })
        .catch(() => undefined);
    }, options.pollMs ?? 3000);
  });
}

/** A promise that resolves on the next SIGINT instead of letting it kill the process; `dispose` restores the default. */
export function interruptLatch(signals: Pick<NodeJS.EventEmitter, 'once' | 'off'> = process): {
  interrupted: Promise<void>;
  dispose(): void;
} {
  let onSignal: () => void = () => undefined;
  const interrupted = new Promise<void>((resolve) => {
    onSignal = () => resolve();
  });
  signals.once('SIGINT', onSignal);
  return { interrupted, dispose: () => signals.off('SIGINT', onSignal) };
}
