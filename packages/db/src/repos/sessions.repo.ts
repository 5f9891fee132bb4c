import type { Session } from '@sandcast/core';
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { sessions } from '../schema.ts';

type Row = typeof sessions.$inferSelect;

const toSession = (row: Row): Session => ({
  id: row.id,
  agentId: row.agentId,
  agentVersionId: row.agentVersionId,
  status: row.status,
  primarySandboxId: row.primarySandboxId,
  bindingName: row.bindingName,
  createdByRole: row.createdByRole,
  createdByKeyId: row.createdByKeyId,
  createdAt: row.createdAt.toISOString(),
  endedAt: row.endedAt?.toISOString() ?? null,
});

export interface NewSession {
  agentId: string;
  agentVersionId: string;
  bindingName: string | null;
  createdByRole: string;
  createdByKeyId: string | null;
}

/** Sessions: one agent run each. What they pinned lives on their primary sandbox. */
export function createSessionsRepo(db: Db) {
  return {
    async insert(input: NewSession): Promise<Session> {
      const [row] = await db
        .insert(sessions)
        .values({ id: newId('ses'), status: 'active', ...input })
        .returning();
      return toSession(row!);
    },
    async get(id: string): Promise<Session | null> {
      const rows = await db.select().from(sessions).where(eq(sessions.id, id));
      return rows[0] ? toSession(rows[0]) : null;
    },
    /** Newest first; only those created with `createdByKeyId` when it is given. */
    async list(options: { createdByKeyId?: string; agentId?: string } = {}): Promise<Session[]> {
      const conditions = [];
      if (options.createdByKeyId !== undefined) conditions.push(eq(sessions.createdByKeyId, options.createdByKeyId));
      if (options.agentId !== undefined) conditions.push(eq(sessions.agentId, options.agentId));
      const rows = await db
        .select()
        .from(sessions)
        .where(and(...conditions))
        .orderBy(desc(sessions.createdAt), desc(sessions.id));
      return rows.map(toSession);
    },
    async setPrimarySandbox(id: string, sandboxId: string): Promise<Session | null> {
      const rows = await db.update(sessions).set({ primarySandboxId: sandboxId }).where(eq(sessions.id, id)).returning();
      return rows[0] ? toSession(rows[0]) : null;
    },
    /**
     * The first write of a resource sandbox's creation, in its transaction: bumps the session's
     * fleet serial while it is active. On Postgres the row lock it takes holds concurrent creations
     * in the session until this one commits, so their limit checks see each other. False when the
     * session is not active.
     */
    async claimFleetSlot(id: string): Promise<boolean> {
      const rows = await db
        .update(sessions)
        .set({ fleetSerial: sql`${sessions.fleetSerial} + 1` })
        .where(and(eq(sessions.id, id), eq(sessions.status, 'active')))
        .returning({ id: sessions.id });
      return rows.length === 1;
    },
    /** active → ended, once; null when it had already ended (or does not exist). */
    async end(id: string, at: Date): Promise<Session | null> {
      const rows = await db
        .update(sessions)
        .set({ status: 'ended', endedAt: at })
        .where(and(eq(sessions.id, id), eq(sessions.status, 'active')))
        .returning();
      return rows[0] ? toSession(rows[0]) : null;
    },
  };
}
