import { createHash } from 'node:crypto';
import type { BridgeResponse } from './frames.ts';

/** The most request ids one channel (or one file bridge) carries in its lifetime. */
export const MAX_LIFETIME_REQUESTS = 50_000;
/** Bytes of settled answers kept to replay to a repeated id; older ones are forgotten first. */
export const MAX_RETAINED_ANSWER_BYTES = 4 * 1024 * 1024;

export type LedgerEntry = { state: 'pending' } | { state: 'settled'; response: BridgeResponse } | { state: 'forgotten' };

/**
 * Every request id a channel has forwarded, so that none is forwarded twice. Ids are kept as a
 * 128-bit digest (a hostile 256-byte id costs the same as a short one); answers are kept for
 * replay within a byte budget, the oldest forgotten first — a repeat of a forgotten id is refused.
 */
export class RequestLedger {
  readonly #entries = new Map<string, LedgerEntry>();
  #retained: { key: string; bytes: number }[] = [];
  #head = 0;
  #retainedBytes = 0;
  readonly #maxIds: number;
  readonly #maxRetainedBytes: number;

  constructor(options: { maxIds?: number; maxRetainedBytes?: number } = {}) {
    this.#maxIds = options.maxIds ?? MAX_LIFETIME_REQUESTS;
    this.#maxRetainedBytes = options.maxRetainedBytes ?? MAX_RETAINED_ANSWER_BYTES;
  }

  #key(id: string): string {
    return createHash('sha256').update(id).digest('base64').slice(0, 22);
  }

  lookup(id: string): LedgerEntry | undefined {
    return this.#entries.get(this.#key(id));
  }

  /** True when the lifetime budget has room for one more id. */
  get hasRoom(): boolean {
    return this.#entries.size < this.#maxIds;
  }

  get ids(): number {
    return this.#entries.size;
  }

  get retainedBytes(): number {
    return this.#retainedBytes;
  }

  /** Records a new id as being forwarded. The caller checked `lookup` and `hasRoom`. */
  begin(id: string): void {
    this.#entries.set(this.#key(id), { state: 'pending' });
  }

  /** Records the answer the id got, kept for replay while the byte budget allows. */
  settle(id: string, response: BridgeResponse): void {
    const key = this.#key(id);
    const bytes = response.body.length + 512;
    if (bytes > this.#maxRetainedBytes) {
      this.#entries.set(key, { state: 'forgotten' });
      return;
    }
    this.#entries.set(key, { state: 'settled', response });
    this.#retained.push({ key, bytes });
    this.#retainedBytes += bytes;
    while (this.#retainedBytes > this.#maxRetainedBytes && this.#head < this.#retained.length) {
      const oldest = this.#retained[this.#head++] as { key: string; bytes: number };
      this.#retainedBytes -= oldest.bytes;
      this.#entries.set(oldest.key, { state: 'forgotten' });
    }
    if (this.#head > 1024 && this.#head * 2 > this.#retained.length) {
      this.#retained = this.#retained.slice(this.#head);
      this.#head = 0;
    }
  }
}
