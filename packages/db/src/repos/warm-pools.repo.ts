import type { Sandbox } from '@sandcast/core';
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { WithSubquery } from 'drizzle-orm/subquery';
import type { Db } from '../connect.ts';
import { NO_RUNNING_SANDBOXES, type RunningSandboxes } from '../running-sandboxes.ts';
import { sandboxes, customImageTemplates as templates, warmPools } from '../schema.ts';
import { activityFrom, type NewActivity } from './activity.repo.ts';
import { toSandbox } from './sandboxes.repo.ts';

/** What a claim must still find true at the moment it takes a member. */
export interface PoolClaim {
  environmentId: string;
  /** The environment's current revision, as the caller read it. */
  revisionId: string;
  /** The image the environment boots from now (null: its base config). */
  imageId: string | null;
  /** The environment's active image as the caller read it (`id` and linked fingerprint), or null for none. */
  active: { id: string; linkedFingerprint: string } | null;
  /** Who the claimed sandbox belongs to from now on. */
  owner: { createdByRole: string; createdByKeyId: string | null; sessionId: string | null; bindingName: string | null };
  at: Date;
  /** The `sandbox.created` row to write with the claim (its subject is the claimed sandbox), or none. */
  activity?: Omit<NewActivity, 'subjectId'> | undefined;
  /** Marks the image the member boots from as used now (a claim counted as a use of it). */
  touchImage?: boolean | undefined;
  /** Makes the claimed sandbox this session's primary sandbox. */
  primaryOfSession?: string | undefined;
}

export interface WarmPoolRecord {
  environmentId: string;
  lastRefillError: string | null;
  lastRefillAt: string | null;
}

/**
 * Warm-pool members are sandbox rows with `pooled` true. A claim is one compare-and-set: it takes
 * the oldest running member built from exactly the revision and image the caller names, and only
 * while the environment's current revision and active image (read with row locks, so a rollback,
 * capture, disable, relink or edit committing meanwhile is waited for and re-read) are still the
 * ones the caller saw. Racing claims skip each other's rows; none hands out a superseded member.
 */
export function createWarmPoolsRepo(db: Db, running: RunningSandboxes = NO_RUNNING_SANDBOXES) {
  return {
    /** The environment's pool members not deleted, oldest first. */
    async members(environmentId: string): Promise<Sandbox[]> {
      const rows = await db
        .select()
        .from(sandboxes)
        .where(and(eq(sandboxes.environmentId, environmentId), eq(sandboxes.pooled, true), ne(sandboxes.status, 'deleted')))
        .orderBy(asc(sandboxes.createdAt), asc(sandboxes.id));
      return rows.map(toSandbox);
    },

    /** Environments with pool members not deleted (a pool turned off or an environment gone still drains). */
    async environmentsWithMembers(): Promise<string[]> {
      const rows = await db
        .selectDistinct({ environmentId: sandboxes.environmentId })
        .from(sandboxes)
        .where(and(eq(sandboxes.pooled, true), ne(sandboxes.status, 'deleted')));
      return rows.flatMap((r) => (r.environmentId ? [r.environmentId] : []));
    },

    /**
     * The claim, in one statement: the compare-and-set on the member, and with it (data-modifying
     * CTEs, so all or nothing without a transaction around them) the `sandbox.created` row naming
     * the claimed sandbox, the image's last-used touch and a session's link to its primary sandbox.
     */
    async claim(claim: PoolClaim): Promise<Sandbox | null> {
      const activeSeen = claim.active ? `${claim.active.id} ${claim.active.linkedFingerprint}` : null;
      const touch = claim.touchImage === true && claim.imageId !== null;
      const candidate = sql`(
        SELECT s.id FROM sandboxes s
        WHERE s.pooled AND s.environment_id = ${claim.environmentId}
          AND s.environment_revision_id = ${claim.revisionId}
          AND s.image_id IS NOT DISTINCT FROM ${claim.imageId}::text
          AND s.status = 'running' AND s.desired_status = 'ready' AND s.provider_instance_id IS NOT NULL
        ORDER BY s.created_at, s.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      )`;
      // The image row is locked for the touch's update when there is one: two claims that both
      // held it FOR SHARE and then both updated it would deadlock. Either lock makes a rollback,
      // capture, disable or relink wait for the claim (and a claim wait for them, then re-read).
      const imageLock = touch ? sql`FOR NO KEY UPDATE` : sql`FOR SHARE`;
      const current = sql`EXISTS (
        SELECT 1 FROM environments e WHERE e.id = ${claim.environmentId} AND e.current_revision_id = ${claim.revisionId} FOR SHARE
      ) AND (
        SELECT t.id || ' ' || t.linked_fingerprint FROM environment_custom_image_templates t
        WHERE t.environment_id = ${claim.environmentId} AND t.status = 'active' ${imageLock}
      ) IS NOT DISTINCT FROM ${activeSeen}::text`;
      const claimed = db.$with('claimed').as(
        db
          .update(sandboxes)
          .set({
            pooled: false,
            source: 'warm_pool',
            ...claim.owner,
            lastActivityAt: claim.at,
            updatedAt: claim.at,
          })
          .where(and(sql`${sandboxes.id} = ${candidate}`, eq(sandboxes.pooled, true), current))
          .returning(),
      );
      const ctes: WithSubquery[] = [claimed];
      if (claim.activity) {
        // Its shape is the activity repository's; the subject is the claimed row.
        ctes.push(db.$with('act', { id: sql<string>`id` }).as(activityFrom('claimed', claim.activity)));
      }
      if (touch) {
        ctes.push(
          db.$with('used').as(
            db
              .update(templates)
              .set({ lastUsedAt: sql`now()` })
              .where(and(eq(templates.id, claim.imageId!), sql`EXISTS (SELECT 1 FROM claimed)`)),
          ),
        );
      }
      if (claim.primaryOfSession !== undefined) {
        ctes.push(
          db.$with('primary', { id: sql<string>`id` }).as(sql`
            UPDATE sessions SET primary_sandbox_id = claimed.id FROM claimed WHERE sessions.id = ${claim.primaryOfSession}
            RETURNING sessions.id`),
        );
      }
      const rows = await db
        .with(...ctes)
        .select()
        .from(claimed);
      if (!rows[0]) return null;
      // The claim touched its activity: the claimer's first command needs no statement of its own.
      const sandbox = toSandbox(rows[0]);
      running.remember(sandbox);
      return sandbox;
    },

    /** Records how the last fill went (null: it went fine). */
    async noteRefill(environmentId: string, error: string | null, at: Date): Promise<void> {
      await db
        .insert(warmPools)
        .values({ environmentId, lastRefillError: error, lastRefillAt: at, updatedAt: at })
        .onConflictDoUpdate({ target: warmPools.environmentId, set: { lastRefillError: error, lastRefillAt: at, updatedAt: at } });
    },

    async get(environmentId: string): Promise<WarmPoolRecord | null> {
      const [row] = await db.select().from(warmPools).where(eq(warmPools.environmentId, environmentId));
      if (!row) return null;
      return {
        environmentId: row.environmentId,
        lastRefillError: row.lastRefillError,
        lastRefillAt: row.lastRefillAt?.toISOString() ?? null,
      };
    },
  };
}
