import { eq, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { instanceSettings } from '../schema.ts';

/** The singleton row of instance settings, stored as one JSON document. */
export function createSettingsRepo(db: Db) {
  return {
    async get(): Promise<unknown | null> {
      const rows = await db.select().from(instanceSettings).where(eq(instanceSettings.id, 1));
      return rows[0]?.value ?? null;
    },
    async put(value: unknown): Promise<void> {
      await db
        .insert(instanceSettings)
        .values({ id: 1, value })
        .onConflictDoUpdate({ target: instanceSettings.id, set: { value, updatedAt: sql`now()` } });
    },
  };
}
