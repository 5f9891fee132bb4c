import { ACTIVE_SETUP_SESSION_STATUSES, type SetupSession, type SetupSessionStatus, setupSessionMachine } from '@sandcast/core';
import { and, desc, eq, gt, inArray, lte } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { setupSessions } from '../schema.ts';

type Row = typeof setupSessions.$inferSelect;

const toSession = (row: Row): SetupSession => ({
  id: row.id,
  environmentId: row.environmentId,
  environmentRevisionId: row.environmentRevisionId,
  provider: row.provider,
  status: row.status,
  sourceTemplateId: row.sourceTemplateId,
  providerLeaseId: row.providerLeaseId,
  connectionSummary: row.connectionSummary,
  expiresAt: row.expiresAt.toISOString(),
  finishedAt: row.finishedAt?.toISOString() ?? null,
  failureReason: row.failureReason,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export interface NewSetupSession {
  environmentId: string;
  environmentRevisionId: string;
  provider: string;
  sourceTemplateId: string | null;
  expiresAt: Date;
  createdByKeyId: string | null;
}

export interface SetupSessionPatch {
  providerLeaseId?: string | undefined;
  connectionSummary?: Record<string, unknown> | undefined;
  failureReason?: string | undefined;
  /** Set finishedAt (for terminal states). */
  finished?: boolean | undefined;
}

/**
 * Setup sessions. The database holds the one-active-session-per-environment invariant (a partial
 * unique index); status changes are compare-and-set on the statuses the core machine allows.
 */
export function createSetupSessionsRepo(db: Db) {
  return {
    /** Inserts a `starting` session; a second active one for the environment is a unique violation. */
    async insert(input: NewSetupSession): Promise<SetupSession> {
      const [row] = await db
        .insert(setupSessions)
        .values({ id: newId('setup'), status: 'starting', connectionSummary: {}, ...input })
        .returning();
      return toSession(row!);
    },

    async get(id: string): Promise<SetupSession | null> {
      const rows = await db.select().from(setupSessions).where(eq(setupSessions.id, id));
      return rows[0] ? toSession(rows[0]) : null;
    },

    async latestForEnvironment(environmentId: string): Promise<SetupSession | null> {
      const rows = await db
        .select()
        .from(setupSessions)
        .where(eq(setupSessions.environmentId, environmentId))
        .orderBy(desc(setupSessions.createdAt), desc(setupSessions.id))
        .limit(1);
      return rows[0] ? toSession(rows[0]) : null;
    },

    async activeForEnvironment(environmentId: string): Promise<SetupSession | null> {
      const rows = await db
        .select()
        .from(setupSessions)
        .where(and(eq(setupSessions.environmentId, environmentId), inArray(setupSessions.status, [...ACTIVE_SETUP_SESSION_STATUSES])));
      return rows[0] ? toSession(rows[0]) : null;
    },

    /** Every session holding a setup slot, optionally only those past their expiry. */
    async listActive(options: { expiredBefore?: Date } = {}): Promise<SetupSession[]> {
      const active = inArray(setupSessions.status, [...ACTIVE_SETUP_SESSION_STATUSES]);
      const rows = await db
        .select()
        .from(setupSessions)
        .where(options.expiredBefore ? and(active, lte(setupSessions.expiresAt, options.expiredBefore)) : active);
      return rows.map(toSession);
    },

    /**
     * Moves a session to `to` and applies `patch`, only from a status the core machine allows
     * (and, with `unexpiredAt`, only if it has not expired by then). A session whose current
     * status has no edge to `to` throws InvalidTransition (a 409); null when there is no such
     * session or the expiry guard failed.
     */
    async transition(
      id: string,
      to: SetupSessionStatus,
      patch: SetupSessionPatch = {},
      guard: { unexpiredAt?: Date } = {},
    ): Promise<SetupSession | null> {
      const now = new Date();
      const conditions = [eq(setupSessions.id, id), inArray(setupSessions.status, setupSessionMachine.sourcesOf(to))];
      if (guard.unexpiredAt) conditions.push(gt(setupSessions.expiresAt, guard.unexpiredAt));
      const rows = await db
        .update(setupSessions)
        .set({
          status: to,
          updatedAt: now,
          ...(patch.providerLeaseId !== undefined ? { providerLeaseId: patch.providerLeaseId } : {}),
          ...(patch.connectionSummary !== undefined ? { connectionSummary: patch.connectionSummary } : {}),
          ...(patch.failureReason !== undefined ? { failureReason: patch.failureReason } : {}),
          ...(patch.finished ? { finishedAt: now } : {}),
        })
        .where(and(...conditions))
        .returning();
      if (rows[0]) return toSession(rows[0]);
      const [current] = await db.select({ status: setupSessions.status }).from(setupSessions).where(eq(setupSessions.id, id));
      if (current) setupSessionMachine.transition(current.status, to);
      return null;
    },
  };
}
