import type { Clock } from '../clock.ts';
import { createFrameDecoder } from '../codec.ts';
import type { Frame } from '../frames.ts';

/** Lets every promise callback that is ready run (no timer involved). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export interface ManualClock extends Clock {
  /** Moves time forward, firing due timers in order and letting promises settle after each. */
  advance(ms: number): Promise<void>;
  /** Timers not yet fired. */
  readonly pendingTimers: number;
}

/** A clock that only moves when told to. */
export function createManualClock(start = 0): ManualClock {
  let now = start;
  let next = 1;
  const timers = new Map<number, { at: number; callback: () => void }>();
  return {
    now: () => now,
    setTimeout(callback, ms) {
      const id = next++;
      timers.set(id, { at: now + Math.max(0, ms), callback });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    get pendingTimers() {
      return timers.size;
    },
    async advance(ms) {
      const until = now + ms;
      await settle();
      for (;;) {
        let due: [number, { at: number; callback: () => void }] | undefined;
        for (const entry of timers) if (entry[1].at <= until && (!due || entry[1].at < due[1].at)) due = entry;
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].callback();
        await settle();
      }
      now = until;
      await settle();
    },
  };
}

export interface MemoryByteSource extends AsyncIterable<Uint8Array> {
  /** Delivers bytes (a string as UTF-8). */
  push(data: Uint8Array | string): void;
  /** Ends the stream. */
  end(): void;
  /** Fails the stream. */
  fail(error: Error): void;
  /** True once the reader called `return()` (gave the stream up). */
  readonly released: boolean;
}

/** An in-memory byte stream standing in for a provider's stdout. */
export function createMemoryByteSource(): MemoryByteSource {
  const queue: (Uint8Array | null | Error)[] = [];
  let wake: (() => void) | undefined;
  let released = false;
  const put = (item: Uint8Array | null | Error) => {
    queue.push(item);
    wake?.();
  };
  return {
    push: (data) => put(typeof data === 'string' ? Buffer.from(data) : data),
    end: () => put(null),
    fail: (error) => put(error),
    get released() {
      return released;
    },
    [Symbol.asyncIterator]() {
      return {
        async next(): Promise<IteratorResult<Uint8Array>> {
          while (queue.length === 0 && !released) await new Promise<void>((resolve) => (wake = resolve));
          if (released) return { done: true, value: undefined };
          const item = queue.shift() as Uint8Array | null | Error;
          if (item === null) return { done: true, value: undefined };
          if (item instanceof Error) throw item;
          return { done: false, value: item };
        },
        async return(): Promise<IteratorResult<Uint8Array>> {
          released = true;
          wake?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

export interface MemoryFrameSink {
  write(line: string): boolean;
  end(): void;
  /** Every frame written so far, decoded. */
  frames(): Frame[];
  readonly ended: boolean;
  /** Everything written, as text. */
  readonly text: string;
}

/** An in-memory stand-in for a provider's stdin, decoding what the host wrote. */
export function createMemoryFrameSink(): MemoryFrameSink {
  const lines: string[] = [];
  let ended = false;
  return {
    write(line) {
      if (ended) throw new Error('write after end');
      lines.push(line);
      return true;
    },
    end() {
      ended = true;
    },
    frames() {
      return createFrameDecoder()
        .push(Buffer.from(lines.join('')))
        .flatMap((r) => ('frame' in r ? [r.frame] : []));
    },
    get ended() {
      return ended;
    },
    get text() {
      return lines.join('');
    },
  };
}
