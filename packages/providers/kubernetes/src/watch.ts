import { Watch } from '@kubernetes/client-node';
import type { Cluster } from './cluster.ts';

/** While a watch is open, objects are still re-read this often, in case an event was missed. */
const SAFETY_READ_MS = 2_000;

export interface AwaitObjectOptions<T, R> {
  /** The collection to watch, e.g. `/api/v1/namespaces/ns/pods`. */
  path: string;
  name: string;
  read: () => Promise<T | null>;
  /** A result once the object (null: gone) is where the caller wants it, else undefined. */
  decide: (object: T | null) => R | undefined;
  timeoutMs: number;
  /** Re-read interval when the watch cannot be held open (no `watch` verb, a proxy that buffers). */
  pollIntervalMs: number;
  onTimeout: (last: T | null) => Error;
}

/**
 * Waits for one object to reach a state: a watch on its name (whose first event is its current
 * state, so nothing between the caller's write and the watch is missed) decides as soon as the
 * API server tells, and reads back it up — slowly while the watch holds, at the poll interval once
 * it does not.
 */
export function awaitObject<T, R>(cluster: Cluster, options: AwaitObjectOptions<T, R>): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    let settled = false;
    let last: T | null = null;
    let watchOpen = false;
    let controller: AbortController | null = null;
    let timer: NodeJS.Timeout | null = null;
    const deadline = setTimeout(() => finish(() => reject(options.onTimeout(last))), options.timeoutMs);
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (timer) clearTimeout(timer);
      controller?.abort();
      settle();
    };
    const check = (object: T | null) => {
      if (settled) return;
      last = object;
      let result: R | undefined;
      try {
        result = options.decide(object);
      } catch (error) {
        finish(() => reject(error));
        return;
      }
      if (result !== undefined) finish(() => resolve(result as R));
    };
    const readAgain = () => {
      if (settled) return;
      options.read().then(
        (object) => {
          check(object);
          if (!settled) timer = setTimeout(readAgain, watchOpen ? SAFETY_READ_MS : options.pollIntervalMs);
        },
        (error: unknown) => finish(() => reject(error)),
      );
    };
    void new Watch(cluster.config)
      .watch(
        options.path,
        { fieldSelector: `metadata.name=${options.name}` },
        (type: string, object: T) => {
          watchOpen = true;
          check(type === 'DELETED' ? null : object);
        },
        () => {
          watchOpen = false;
        },
      )
      .then(
        (abort) => {
          controller = abort;
          if (settled) abort.abort();
        },
        () => {
          watchOpen = false;
        },
      );
    readAgain();
  });
}
