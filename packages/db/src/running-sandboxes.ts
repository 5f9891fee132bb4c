import type { Sandbox } from '@sandcast/core';

/**
 * The running sandboxes this process has just written or read-and-touched (ADR 0033). An
 * operation on a running sandbox reads its row and touches its activity in one statement; another
 * operation on it while the row's recorded activity is under `ttlMs` old (by the service's clock)
 * and the row was seen under `ttlMs` ago (by this process's monotonic clock) is answered from here
 * instead, and writes no touch: the one it would write is at most `ttlMs` newer than the recorded
 * one, far below any idle timeout. A sandbox just created, started or claimed is remembered with
 * the row that made it running, so its first command needs no statement either.
 *
 * Every write to a sandbox's row through this store forgets the entry first, so within one
 * process a stop, delete or recovery is never answered from here. Another server sharing the
 * database is not seen: its writes reach this process within `ttlMs`, and an operation that ran
 * on compute which went away meanwhile fails at the provider and is read again by the caller.
 */
export interface RunningSandboxes {
  /** The running, claimed sandbox `id` touched less than the ttl ago (for `ownerKeyId` when given), else null. */
  recent(id: string, at: Date, ownerKeyId?: string): Sandbox | null;
  /** Notes the committed row of a sandbox (kept only when running, claimed and with an instance). */
  remember(sandbox: Sandbox): void;
  /** Drops the entry of a sandbox whose row is being written. */
  forget(id: string): void;
}

/** How many sandboxes are kept at most; the oldest entry goes first. */
const MAX_ENTRIES = 10_000;

export function createRunningSandboxes(options: { ttlMs: number; monotonic?: () => number }): RunningSandboxes {
  const { ttlMs } = options;
  const monotonic = options.monotonic ?? (() => performance.now());
  const entries = new Map<string, { sandbox: Sandbox; seenAt: number; touchedAt: number }>();

  return {
    recent(id, at, ownerKeyId) {
      const entry = entries.get(id);
      if (!entry) return null;
      const sinceTouch = at.getTime() - entry.touchedAt;
      if (monotonic() - entry.seenAt >= ttlMs || sinceTouch >= ttlMs || sinceTouch < 0) {
        entries.delete(id);
        return null;
      }
      const { sandbox } = entry;
      if (ownerKeyId !== undefined && sandbox.createdByKeyId !== ownerKeyId) return null;
      return sandbox;
    },
    remember(sandbox) {
      if (ttlMs <= 0 || sandbox.status !== 'running' || sandbox.pooled || !sandbox.providerInstanceId) return;
      entries.delete(sandbox.id);
      entries.set(sandbox.id, { sandbox, seenAt: monotonic(), touchedAt: Date.parse(sandbox.lastActivityAt) });
      if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    },
    forget(id) {
      entries.delete(id);
    },
  };
}

/** Remembers nothing: repositories made outside a store, and stores that turn the cache off. */
export const NO_RUNNING_SANDBOXES: RunningSandboxes = {
  recent: () => null,
  remember: () => undefined,
  forget: () => undefined,
};

/**
 * The view a transaction's repositories get: forgetting happens at once (and again after the
 * commit, so a reader that raced the transaction cannot leave its pre-commit row behind);
 * remembering waits for the commit, so a rolled-back claim is never answered from memory.
 */
export function inTransaction(cache: RunningSandboxes): { view: RunningSandboxes; committed: () => void } {
  const remembered: Sandbox[] = [];
  const forgotten = new Set<string>();
  return {
    view: {
      recent: () => null,
      remember: (sandbox) => remembered.push(sandbox),
      forget: (id) => {
        forgotten.add(id);
        cache.forget(id);
      },
    },
    committed: () => {
      for (const id of forgotten) cache.forget(id);
      for (const sandbox of remembered) cache.remember(sandbox);
    },
  };
}
