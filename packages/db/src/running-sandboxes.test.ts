import type { Sandbox } from '@sandcast/core';
import { describe, expect, it } from 'vitest';
import { createRunningSandboxes, inTransaction } from './running-sandboxes.ts';

const T0 = Date.parse('2026-12-02T00:00:00.000Z');

function running(patch: Partial<Sandbox> = {}): Sandbox {
  return {
    id: 'sbx_1',
    status: 'running',
    pooled: false,
    providerInstanceId: 'inst-1',
    createdByKeyId: 'key_a',
    lastActivityAt: new Date(T0).toISOString(),
    ...patch,
  } as Sandbox;
}

describe('running sandboxes in memory (ADR 0033)', () => {
  const make = () => {
    const clock = { mono: 0 };
    const cache = createRunningSandboxes({ ttlMs: 1000, monotonic: () => clock.mono });
    return { cache, clock };
  };

  it('answers a repeat within the ttl, for the owner or an admin, and not for another key', () => {
    const { cache } = make();
    cache.remember(running());
    expect(cache.recent('sbx_1', new Date(T0 + 999), 'key_a')?.id).toBe('sbx_1');
    expect(cache.recent('sbx_1', new Date(T0 + 10), undefined)?.id).toBe('sbx_1');
    expect(cache.recent('sbx_1', new Date(T0 + 10), 'key_b')).toBeNull();
    expect(cache.recent('sbx_other', new Date(T0 + 10))).toBeNull();
  });

  it('expires by the service clock and by the monotonic clock, and when the service clock goes back', () => {
    const byService = make();
    byService.cache.remember(running());
    expect(byService.cache.recent('sbx_1', new Date(T0 + 1000))).toBeNull();
    // Once expired it is gone, even for an earlier time.
    expect(byService.cache.recent('sbx_1', new Date(T0 + 1))).toBeNull();

    const byMonotonic = make();
    byMonotonic.cache.remember(running());
    byMonotonic.clock.mono = 1000;
    expect(byMonotonic.cache.recent('sbx_1', new Date(T0 + 1))).toBeNull();

    const backwards = make();
    backwards.cache.remember(running());
    expect(backwards.cache.recent('sbx_1', new Date(T0 - 1))).toBeNull();
  });

  it('keeps only running, claimed sandboxes with an instance', () => {
    for (const patch of [{ status: 'stopped' as const }, { pooled: true }, { providerInstanceId: null }]) {
      const { cache } = make();
      cache.remember(running(patch));
      expect(cache.recent('sbx_1', new Date(T0 + 1))).toBeNull();
    }
    const off = createRunningSandboxes({ ttlMs: 0 });
    off.remember(running());
    expect(off.recent('sbx_1', new Date(T0))).toBeNull();
  });

  it('forgets on a write', () => {
    const { cache } = make();
    cache.remember(running());
    cache.forget('sbx_1');
    expect(cache.recent('sbx_1', new Date(T0 + 1))).toBeNull();
  });

  it('a transaction forgets at once and again on commit, and remembers only once committed', () => {
    const { cache } = make();
    cache.remember(running());
    const tx = inTransaction(cache);
    tx.view.forget('sbx_1');
    expect(cache.recent('sbx_1', new Date(T0 + 1))).toBeNull();
    // A reader outside the transaction remembers the row it saw before the commit…
    cache.remember(running());
    tx.view.remember(running({ id: 'sbx_2' }));
    expect(tx.view.recent('sbx_2', new Date(T0 + 1))).toBeNull();
    expect(cache.recent('sbx_2', new Date(T0 + 1))).toBeNull();
    tx.committed();
    // …which the commit drops; the transaction's own row is now known.
    expect(cache.recent('sbx_1', new Date(T0 + 1))).toBeNull();
    expect(cache.recent('sbx_2', new Date(T0 + 1))?.id).toBe('sbx_2');
    // A transaction that never commits leaves nothing behind.
    const rolledBack = inTransaction(cache);
    rolledBack.view.remember(running({ id: 'sbx_3' }));
    expect(cache.recent('sbx_3', new Date(T0 + 1))).toBeNull();
  });

  it('holds a bounded number of sandboxes, dropping the oldest', () => {
    const { cache } = make();
    for (let i = 0; i <= 10_000; i++) cache.remember(running({ id: `sbx_${i}` }));
    expect(cache.recent('sbx_0', new Date(T0 + 1))).toBeNull();
    expect(cache.recent('sbx_1', new Date(T0 + 1))?.id).toBe('sbx_1');
    expect(cache.recent('sbx_10000', new Date(T0 + 1))?.id).toBe('sbx_10000');
  });
});
