import type { ApiKeyRole } from '@sandcast/core';
import { and, eq, gt, isNull, lt, or } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { apiKeys, uiSessions } from '../schema.ts';

/** A live web UI session and the key it acts for. */
export interface UiSessionRecord {
  id: string;
  apiKeyId: string;
  role: ApiKeyRole;
  createdAt: string;
  expiresAt: string;
}

/** Web UI sessions, stored only as hashes of the cookie token. */
export function createUiSessionsRepo(db: Db) {
  return {
    async insert(input: { tokenHash: string; apiKeyId: string; createdAt: Date; expiresAt: Date }): Promise<{ id: string }> {
      const [row] = await db
        .insert(uiSessions)
        .values({ id: newId('uis'), ...input })
        .returning({ id: uiSessions.id });
      return row!;
    },
    /** The session with this token hash when it is unexpired at `now`, not revoked, and its key is not revoked. */
    async findLive(tokenHash: string, now: Date): Promise<UiSessionRecord | null> {
      const rows = await db
        .select({
          id: uiSessions.id,
          apiKeyId: uiSessions.apiKeyId,
          role: apiKeys.role,
          createdAt: uiSessions.createdAt,
          expiresAt: uiSessions.expiresAt,
        })
        .from(uiSessions)
        .innerJoin(apiKeys, eq(apiKeys.id, uiSessions.apiKeyId))
        .where(
          and(eq(uiSessions.tokenHash, tokenHash), isNull(uiSessions.revokedAt), gt(uiSessions.expiresAt, now), isNull(apiKeys.revokedAt)),
        );
      const row = rows[0];
      return row
        ? {
            id: row.id,
            apiKeyId: row.apiKeyId,
            role: row.role,
            createdAt: row.createdAt.toISOString(),
            expiresAt: row.expiresAt.toISOString(),
          }
        : null;
    },
    /** Ends the session with this token hash; false when there was none live. */
    async revoke(tokenHash: string, now: Date): Promise<boolean> {
      const rows = await db
        .update(uiSessions)
        .set({ revokedAt: now })
        .where(and(eq(uiSessions.tokenHash, tokenHash), isNull(uiSessions.revokedAt)))
        .returning({ id: uiSessions.id });
      return rows.length > 0;
    },
    /** Removes sessions that expired or were revoked before `before`; returns how many. */
    async deleteEnded(before: Date): Promise<number> {
      const rows = await db
        .delete(uiSessions)
        .where(or(lt(uiSessions.expiresAt, before), lt(uiSessions.revokedAt, before)))
        .returning({ id: uiSessions.id });
      return rows.length;
    },
  };
}
