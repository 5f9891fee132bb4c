import type { ApiKeyRole } from '@sandcast/core';
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { apiKeys } from '../schema.ts';

export interface ApiKeyRecord {
  id: string;
  name: string;
  role: ApiKeyRole;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Agents an agent key may start sessions for; admin keys ignore it. */
  allowedAgentIds: string[];
}

const toRecord = (row: typeof apiKeys.$inferSelect): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  role: row.role,
  prefix: row.prefix,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  revokedAt: row.revokedAt?.toISOString() ?? null,
  allowedAgentIds: row.allowedAgentIds,
});

/** API keys, stored only as hashes of the key. */
export function createApiKeysRepo(db: Db) {
  return {
    async insert(input: { name: string; role: ApiKeyRole; keyHash: string; prefix: string }): Promise<ApiKeyRecord> {
      const [row] = await db
        .insert(apiKeys)
        .values({ id: newId('key'), ...input })
        .returning();
      return toRecord(row!);
    },
    /** The live (not revoked) key with this hash. */
    async findActiveByHash(keyHash: string): Promise<ApiKeyRecord | null> {
      const rows = await db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)));
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async get(id: string): Promise<ApiKeyRecord | null> {
      const rows = await db.select().from(apiKeys).where(eq(apiKeys.id, id));
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async setAllowedAgents(id: string, agentIds: string[]): Promise<ApiKeyRecord | null> {
      const rows = await db.update(apiKeys).set({ allowedAgentIds: agentIds }).where(eq(apiKeys.id, id)).returning();
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async list(): Promise<ApiKeyRecord[]> {
      return (await db.select().from(apiKeys).orderBy(asc(apiKeys.createdAt))).map(toRecord);
    },
    async count(): Promise<number> {
      const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(apiKeys);
      return row?.n ?? 0;
    },
    /** Marks the key revoked; null if no such key. Revoking twice keeps the first time. */
    async revoke(id: string): Promise<ApiKeyRecord | null> {
      const rows = await db
        .update(apiKeys)
        .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
        .where(eq(apiKeys.id, id))
        .returning();
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async touch(id: string): Promise<void> {
      await db.update(apiKeys).set({ lastUsedAt: sql`now()` }).where(eq(apiKeys.id, id));
    },
  };
}
