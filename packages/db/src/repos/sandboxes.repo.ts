import {
  type FleetReservation,
  type Sandbox,
  type SandboxDesiredStatus,
  type SandboxSource,
  type SandboxSpec,
  type SandboxStatus,
  sandboxMachine,
  withSpecDefaults,
} from '@sandcast/core';
import { and, count, desc, eq, inArray, isNotNull, ne, notInArray, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { NO_RUNNING_SANDBOXES, type RunningSandboxes } from '../running-sandboxes.ts';
import { sandboxes, sessions } from '../schema.ts';
import { activityFrom, type NewActivity } from './activity.repo.ts';

type Row = typeof sandboxes.$inferSelect;

export const toSandbox = (row: Row): Sandbox => ({
  id: row.id,
  environmentId: row.environmentId,
  environmentRevisionId: row.environmentRevisionId,
  imageId: row.imageId,
  provider: row.provider,
  providerInstanceId: row.providerInstanceId,
  desiredStatus: row.desiredStatus,
  status: row.status,
  failureReason: row.failureReason,
  sessionId: row.sessionId,
  bindingName: row.bindingName,
  logicalId: row.logicalId,
  reservation: row.reservation ?? null,
  spec: withSpecDefaults(row.spec),
  configOverrides: row.configOverrides,
  generation: row.generation,
  currentCheckpointId: row.currentCheckpointId,
  lastActivityAt: row.lastActivityAt.toISOString(),
  createdByRole: row.createdByRole,
  createdByKeyId: row.createdByKeyId,
  source: row.source,
  pooled: row.pooled,
  forkedFromId: row.forkedFromId,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export interface NewSandbox {
  environmentId: string | null;
  environmentRevisionId: string;
  imageId: string | null;
  provider: string;
  /** Default: the default spec. */
  spec?: SandboxSpec | undefined;
  sessionId?: string | null | undefined;
  bindingName?: string | null | undefined;
  /** A resource sandbox's session-scoped id and what it reserves; omit for other sandboxes. */
  logicalId?: string | null | undefined;
  reservation?: FleetReservation | null | undefined;
  configOverrides?: Record<string, unknown> | undefined;
  createdByRole: string;
  createdByKeyId: string | null;
  /** Default `cold`. */
  source?: SandboxSource | undefined;
  /** A warm-pool member (default false). */
  pooled?: boolean | undefined;
  forkedFromId?: string | null | undefined;
}

export interface SandboxPatch {
  providerInstanceId?: string | null;
  desiredStatus?: SandboxDesiredStatus;
  status?: SandboxStatus;
  failureReason?: string | null;
  lastActivityAt?: Date;
}

export interface SandboxGuard {
  /** Write only while the sandbox is still at this generation (fencing out older compute). */
  generation?: number | undefined;
  /** Write only while the status is one of these (narrower than the machine's sources). */
  statuses?: readonly SandboxStatus[] | undefined;
  /** Write only while the row is (true) or is not (false) a warm-pool member: a claim meanwhile fences out a drain. */
  pooled?: boolean | undefined;
}

export function createSandboxesRepo(db: Db, running: RunningSandboxes = NO_RUNNING_SANDBOXES) {
  const guarded = (id: string, to: SandboxStatus | undefined, guard: SandboxGuard) => {
    const conditions = [eq(sandboxes.id, id)];
    if (to) conditions.push(inArray(sandboxes.status, sandboxMachine.sourcesOf(to)));
    if (guard.statuses) conditions.push(inArray(sandboxes.status, [...guard.statuses]));
    if (guard.generation !== undefined) conditions.push(eq(sandboxes.generation, guard.generation));
    if (guard.pooled !== undefined) conditions.push(eq(sandboxes.pooled, guard.pooled));
    return and(...conditions);
  };

  return {
    /**
     * A new sandbox row; with `activity`, its record (the subject is the new row) is written by the
     * same statement, so the two need no transaction around them.
     */
    async insert(input: NewSandbox, activity?: Omit<NewActivity, 'subjectId'>): Promise<Sandbox> {
      const values = {
        id: newId('sbx'),
        desiredStatus: 'ready' as const,
        status: 'starting' as const,
        ...input,
        spec: { ...(input.spec ?? {}) },
        configOverrides: input.configOverrides ?? {},
      };
      if (!activity) {
        const [row] = await db.insert(sandboxes).values(values).returning();
        return toSandbox(row!);
      }
      const inserted = db.$with('inserted').as(db.insert(sandboxes).values(values).returning());
      const recorded = db.$with('act', { id: sql<string>`id` }).as(activityFrom('inserted', activity));
      const [row] = await db.with(inserted, recorded).select().from(inserted);
      return toSandbox(row!);
    },
    async get(id: string): Promise<Sandbox | null> {
      const rows = await db.select().from(sandboxes).where(eq(sandboxes.id, id));
      return rows[0] ? toSandbox(rows[0]) : null;
    },
    /** A session's resource sandbox by its logical id, deleted ones included. */
    async getFleet(sessionId: string, logicalId: string): Promise<Sandbox | null> {
      const rows = await db
        .select()
        .from(sandboxes)
        .where(and(eq(sandboxes.sessionId, sessionId), eq(sandboxes.logicalId, logicalId)));
      return rows[0] ? toSandbox(rows[0]) : null;
    },
    /** A session's resource sandboxes, oldest first; deleted ones are left out unless asked for. */
    async listFleet(sessionId: string, options: { includeDeleted?: boolean } = {}): Promise<Sandbox[]> {
      const conditions = [eq(sandboxes.sessionId, sessionId), isNotNull(sandboxes.logicalId)];
      if (!options.includeDeleted) conditions.push(ne(sandboxes.status, 'deleted'));
      const rows = await db
        .select()
        .from(sandboxes)
        .where(and(...conditions))
        .orderBy(sandboxes.createdAt, sandboxes.id);
      return rows.map(toSandbox);
    },
    /** Newest first; deleted ones are left out unless asked for; `pooled` picks pool members or the others. */
    async list(options: { includeDeleted?: boolean; sessionId?: string; pooled?: boolean } = {}): Promise<Sandbox[]> {
      const conditions = [];
      if (!options.includeDeleted) conditions.push(ne(sandboxes.status, 'deleted'));
      if (options.pooled !== undefined) conditions.push(eq(sandboxes.pooled, options.pooled));
      if (options.sessionId !== undefined) conditions.push(eq(sandboxes.sessionId, options.sessionId));
      const rows = await db
        .select()
        .from(sandboxes)
        .where(and(...conditions))
        .orderBy(desc(sandboxes.createdAt), desc(sandboxes.id));
      return rows.map(toSandbox);
    },
    /**
     * Applies `patch`. A status change is compare-and-set on the statuses the core machine
     * allows (and on `guard`): from a status with no edge to the new one it throws
     * InvalidTransition (a 409). Null when there is no such sandbox, or when the guard's
     * generation or statuses no longer hold (another writer got there first).
     */
    async update(id: string, patch: SandboxPatch, guard: SandboxGuard = {}): Promise<Sandbox | null> {
      const to = patch.status;
      running.forget(id);
      const rows = await db
        .update(sandboxes)
        .set({ ...patch, updatedAt: new Date() })
        .where(guarded(id, to, guard))
        .returning();
      if (rows[0]) {
        // A sandbox just made running answers its first command from memory while its last
        // activity (its creation or start) is under a second old.
        const sandbox = toSandbox(rows[0]);
        running.remember(sandbox);
        return sandbox;
      }
      if (!to) return null;
      const [current] = await db
        .select({ status: sandboxes.status, generation: sandboxes.generation })
        .from(sandboxes)
        .where(eq(sandboxes.id, id));
      // Only a missing edge is a transition error; a lost guard is the caller's race to handle.
      if (current && !sandboxMachine.can(current.status, to)) sandboxMachine.transition(current.status, to);
      return null;
    },
    /**
     * Fences the current compute: generation N → N+1 and status → starting, in one
     * compare-and-set. Exactly one of several racing callers gets the row; the others get null.
     */
    async bumpGeneration(id: string, fromGeneration: number): Promise<Sandbox | null> {
      running.forget(id);
      const rows = await db
        .update(sandboxes)
        .set({ generation: fromGeneration + 1, status: 'starting', providerInstanceId: null, failureReason: null, updatedAt: new Date() })
        .where(guarded(id, 'starting', { generation: fromGeneration }))
        .returning();
      return rows[0] ? toSandbox(rows[0]) : null;
    },
    /**
     * Sandboxes of ended sessions (primary and resource alike) still meant to exist — what a
     * server that died between ending a session and tearing its sandboxes down leaves — are set to
     * desired `deleted`, for the lifecycle step to remove. Answers their ids.
     */
    async desireDeletedOfEndedSessions(): Promise<string[]> {
      const rows = await db
        .update(sandboxes)
        .set({ desiredStatus: 'deleted', updatedAt: new Date() })
        .where(
          and(
            ne(sandboxes.desiredStatus, 'deleted'),
            inArray(sandboxes.sessionId, db.select({ id: sessions.id }).from(sessions).where(eq(sessions.status, 'ended'))),
          ),
        )
        .returning({ id: sandboxes.id });
      for (const row of rows) running.forget(row.id);
      return rows.map((r) => r.id);
    },
    /** Sandboxes that hold compute or may soon (not deleted, failed or lost), pool members included. */
    async countLive(): Promise<number> {
      const [row] = await db
        .select({ n: count() })
        .from(sandboxes)
        .where(notInArray(sandboxes.status, ['deleted', 'failed', 'lost']));
      return Number(row?.n ?? 0);
    },
    /** Records an operation through Sandcast (the idle policy counts from it). */
    async touch(id: string, at: Date): Promise<void> {
      await db.update(sandboxes).set({ lastActivityAt: at }).where(eq(sandboxes.id, id));
    },
    /**
     * The read and the activity touch of an operation on running compute, in one statement: sets
     * `lastActivityAt` and returns the sandbox when it is running with an instance, is nobody's
     * pool member, and (given `ownerKeyId`) was created with that key; else touches nothing and
     * returns null, and the caller reads the row to learn why.
     */
    async touchRunning(id: string, at: Date, ownerKeyId?: string): Promise<Sandbox | null> {
      running.forget(id);
      const rows = await db
        .update(sandboxes)
        .set({ lastActivityAt: at })
        .where(
          and(
            eq(sandboxes.id, id),
            eq(sandboxes.status, 'running'),
            eq(sandboxes.pooled, false),
            isNotNull(sandboxes.providerInstanceId),
            ownerKeyId === undefined ? undefined : eq(sandboxes.createdByKeyId, ownerKeyId),
          ),
        )
        .returning();
      if (!rows[0]) return null;
      const sandbox = toSandbox(rows[0]);
      running.remember(sandbox);
      return sandbox;
    },
    /**
     * What `touchRunning` would answer, from memory, when this process touched the sandbox less
     * than the store's cache time ago (ADR 0033); null sends the caller to `touchRunning`.
     */
    recentRunning(id: string, at: Date, ownerKeyId?: string): Sandbox | null {
      return running.recent(id, at, ownerKeyId);
    },
  };
}
