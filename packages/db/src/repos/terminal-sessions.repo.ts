import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { terminalHostKeyPins, terminalSessions } from '../schema.ts';

export interface TerminalSessionRecord {
  id: string;
  /** What it attaches to: a setup session's sandbox, or a sandbox (a session's primary one). */
  setupSessionId: string | null;
  sandboxId: string | null;
  connectionType: 'pty' | 'ssh';
  connectExpiresAt: string;
  sessionExpiresAt: string | null;
  consumedAt: string | null;
  closedAt: string | null;
  closeReason: string | null;
  createdAt: string;
}

/** Exactly one target: a setup session or a sandbox. */
export type TerminalTarget = { setupSessionId: string; sandboxId?: undefined } | { sandboxId: string; setupSessionId?: undefined };

export type NewTerminalSession = TerminalTarget & {
  tokenHash: string;
  connectionType: 'pty' | 'ssh';
  connectExpiresAt: Date;
  sessionExpiresAt: Date | null;
  createdByKeyId: string | null;
};

/** Why a token was not accepted, or the record it opened. */
export type ConsumeOutcome =
  | { ok: true; record: TerminalSessionRecord }
  | { ok: false; why: 'unknown' | 'already_used' | 'expired'; record: TerminalSessionRecord | null };

export type HostKeyPinOutcome = { ok: true; pinned: string; firstUse: boolean } | { ok: false; pinned: string };

const toRecord = (row: typeof terminalSessions.$inferSelect): TerminalSessionRecord => ({
  id: row.id,
  setupSessionId: row.setupSessionId,
  sandboxId: row.sandboxId,
  connectionType: row.connectionType,
  connectExpiresAt: row.connectExpiresAt.toISOString(),
  sessionExpiresAt: row.sessionExpiresAt?.toISOString() ?? null,
  consumedAt: row.consumedAt?.toISOString() ?? null,
  closedAt: row.closedAt?.toISOString() ?? null,
  closeReason: row.closeReason,
  createdAt: row.createdAt.toISOString(),
});

/**
 * Browser terminal records and SSH host-key pins. Tokens are stored only as hashes; using one is
 * a single compare-and-set, so two connections racing with the same token cannot both win, and a
 * restart cannot make a used or expired token usable again.
 */
export function createTerminalSessionsRepo(db: Db) {
  return {
    async insert(input: NewTerminalSession): Promise<TerminalSessionRecord> {
      const [row] = await db
        .insert(terminalSessions)
        .values({ id: newId('term'), ...input })
        .returning();
      return toRecord(row!);
    },

    async get(id: string): Promise<TerminalSessionRecord | null> {
      const rows = await db.select().from(terminalSessions).where(eq(terminalSessions.id, id));
      return rows[0] ? toRecord(rows[0]) : null;
    },

    /**
     * Uses the token: succeeds once, for the record with this id, target and token hash, while
     * its connect window is open at `now`.
     */
    async consume(input: TerminalTarget & { id: string; tokenHash: string; now: Date }): Promise<ConsumeOutcome> {
      const mine = and(
        eq(terminalSessions.id, input.id),
        input.sandboxId !== undefined
          ? eq(terminalSessions.sandboxId, input.sandboxId)
          : eq(terminalSessions.setupSessionId, input.setupSessionId),
        eq(terminalSessions.tokenHash, input.tokenHash),
      );
      const rows = await db
        .update(terminalSessions)
        .set({ consumedAt: input.now })
        .where(and(mine, isNull(terminalSessions.consumedAt), sql`${terminalSessions.connectExpiresAt} > ${input.now.toISOString()}`))
        .returning();
      if (rows[0]) return { ok: true, record: toRecord(rows[0]) };
      const found = await db.select().from(terminalSessions).where(mine);
      if (!found[0]) return { ok: false, why: 'unknown', record: null };
      const record = toRecord(found[0]);
      return { ok: false, why: record.consumedAt ? 'already_used' : 'expired', record };
    },

    /** Burns an unused token (it was seen somewhere it should not be, such as a URL). */
    async revokeUnused(id: string, now: Date): Promise<void> {
      await db
        .update(terminalSessions)
        .set({ consumedAt: now, closedAt: now, closeReason: 'token_exposed' })
        .where(and(eq(terminalSessions.id, id), isNull(terminalSessions.consumedAt)));
    },

    async markClosed(id: string, reason: string, now: Date): Promise<void> {
      await db
        .update(terminalSessions)
        .set({ closedAt: now, closeReason: reason })
        .where(and(eq(terminalSessions.id, id), isNull(terminalSessions.closedAt)));
    },

    /**
     * Trust on first use: the first fingerprint recorded for this setup session and endpoint wins
     * (a race between two connections is settled by the primary key); later ones must equal it.
     */
    async pinHostKey(input: { setupSessionId: string; host: string; port: number; fingerprint: string }): Promise<HostKeyPinOutcome> {
      const inserted = await db.insert(terminalHostKeyPins).values(input).onConflictDoNothing().returning();
      if (inserted[0]) return { ok: true, pinned: input.fingerprint, firstUse: true };
      const [row] = await db
        .select()
        .from(terminalHostKeyPins)
        .where(
          and(
            eq(terminalHostKeyPins.setupSessionId, input.setupSessionId),
            eq(terminalHostKeyPins.host, input.host),
            eq(terminalHostKeyPins.port, input.port),
          ),
        );
      const pinned = row?.fingerprint ?? input.fingerprint;
      return pinned === input.fingerprint ? { ok: true, pinned, firstUse: false } : { ok: false, pinned };
    },
  };
}
