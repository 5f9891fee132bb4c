import { and, eq, or, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { leaderLeases } from '../schema.ts';

/**
 * Leases for work only one server may do at a time. Taking or renewing one is a single statement
 * (an upsert that only overwrites an expired lease or one the caller already holds), so it needs
 * no row lock and behaves the same on Postgres and PGlite.
 */
export function createLeaderLeasesRepo(db: Db) {
  return {
    /** True when `holder` now holds `name` until `now + ttlMs` (taken, or renewed). */
    async acquire(name: string, holder: string, ttlMs: number, now: Date): Promise<boolean> {
      const expiresAt = new Date(now.getTime() + ttlMs);
      const rows = await db
        .insert(leaderLeases)
        .values({ name, holder, expiresAt })
        .onConflictDoUpdate({
          target: leaderLeases.name,
          set: { holder, expiresAt },
          setWhere: or(eq(leaderLeases.holder, holder), sql`${leaderLeases.expiresAt} < ${now.toISOString()}::timestamptz`),
        })
        .returning({ holder: leaderLeases.holder });
      return rows.length > 0;
    },
    /** Gives the lease up (on shutdown) so another server takes over without waiting for expiry. */
    async release(name: string, holder: string): Promise<void> {
      await db.delete(leaderLeases).where(and(eq(leaderLeases.name, name), eq(leaderLeases.holder, holder)));
    },
  };
}
