import { isIP } from 'node:net';

export interface LoginThrottleOptions {
  /** Failed logins a source may make before back-off starts. Default 5. */
  freeFailures?: number | undefined;
  /** The first back-off; it doubles with every further failure. Default 1 s. */
  baseDelayMs?: number | undefined;
  /** The longest back-off. Default 5 minutes. */
  maxDelayMs?: number | undefined;
  /** A source with no failure for this long is forgotten. Default 15 minutes. */
  forgetAfterMs?: number | undefined;
  /** Sources remembered at once; the one whose last failure is oldest goes first. Default 10,000. */
  maxSources?: number | undefined;
  clock?: { now(): Date } | undefined;
}

export interface SourceState {
  failures: number;
  /** Epoch ms until which every login from this source is refused unchecked (0: not backing off). */
  blockedUntil: number;
  lastFailureAt: number;
}

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterMs: number; failures: number };

/**
 * The source a login counts against: an IPv4 address (also when IPv4-mapped), or the /64 an
 * IPv6 address belongs to — one host usually holds a whole /64, so counting single addresses
 * would let it rotate past the back-off.
 */
export function sourceOf(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

/**
 * Exponential back-off per source after failed logins. The first `freeFailures` cost nothing
 * (typos, an expired command pasted twice); each failure after them refuses the source for
 * `baseDelayMs`, doubling up to `maxDelayMs`. While refused, a login is answered without looking
 * at the credential, so guessing stops rather than slows. A success forgets the source. Memory is
 * bounded by `maxSources`.
 */
export class LoginThrottle {
  private readonly sources = new Map<string, SourceState>();
  private readonly freeFailures: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly forgetAfterMs: number;
  private readonly maxSources: number;
  private readonly clock: { now(): Date };

  constructor(options: LoginThrottleOptions = {}) {
    this.freeFailures = options.freeFailures ?? 5;
    this.baseDelayMs = options.baseDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 5 * 60_000;
    this.forgetAfterMs = options.forgetAfterMs ?? 15 * 60_000;
    this.maxSources = Math.max(1, options.maxSources ?? 10_000);
    this.clock = options.clock ?? { now: () => new Date() };
  }

  /** Whether a login from this source may be checked now. */
  check(source: string): ThrottleVerdict {
    const state = this.current(source);
    if (!state) return { allowed: true };
    const wait = state.blockedUntil - this.clock.now().getTime();
    return wait > 0 ? { allowed: false, retryAfterMs: wait, failures: state.failures } : { allowed: true };
  }

  /** A login from this source failed; returns its state after this failure. */
  failed(source: string): SourceState {
    const now = this.clock.now().getTime();
    const previous = this.current(source);
    const failures = (previous?.failures ?? 0) + 1;
    const over = failures - this.freeFailures;
    const delay = over > 0 ? Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.min(over - 1, 40)) : 0;
    const state: SourceState = { failures, blockedUntil: delay > 0 ? now + delay : 0, lastFailureAt: now };
    // Re-inserted, so the map's order is the order of last failure: the first key is the stalest.
    this.sources.delete(source);
    this.sources.set(source, state);
    while (this.sources.size > this.maxSources) this.sources.delete(this.sources.keys().next().value!);
    return state;
  }

  /** A login from this source succeeded: its failures are forgotten. */
  succeeded(source: string): void {
    this.sources.delete(source);
  }

  /** The source's state, or undefined when it has none (tests, logs). */
  state(source: string): SourceState | undefined {
    return this.current(source);
  }

  /** Sources remembered now. */
  size(): number {
    return this.sources.size;
  }

  private current(source: string): SourceState | undefined {
    const state = this.sources.get(source);
    if (!state) return undefined;
    const now = this.clock.now().getTime();
    if (now - state.lastFailureAt > this.forgetAfterMs && now >= state.blockedUntil) {
      this.sources.delete(source);
      return undefined;
    }
    return state;
  }
}
