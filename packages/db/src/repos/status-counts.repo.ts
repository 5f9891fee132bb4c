import { count } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { sandboxes, setupSessions } from '../schema.ts';

/** How many rows are in each status: one grouped count per table, cheap enough for every metrics scrape. */
export function createStatusCountsRepo(db: Db) {
  const byStatus = async (table: typeof sandboxes | typeof setupSessions): Promise<Map<string, number>> => {
    const rows = await db.select({ status: table.status, n: count() }).from(table).groupBy(table.status);
    return new Map(rows.map((row) => [row.status, Number(row.n)]));
  };
  return {
    sandboxes: () => byStatus(sandboxes),
    setupSessions: () => byStatus(setupSessions),
  };
}
