import type { Sandbox } from '@sandcast/core';
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { NO_RUNNING_SANDBOXES, type RunningSandboxes } from '../running-sandboxes.ts';
import { sandboxes, warmPools } from '../schema.ts';
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

    async claim(claim: PoolClaim): Promise<Sandbox | null> {
      const activeSeen = claim.active ? `${claim.active.id} ${claim.active.linkedFingerprint}` : null;
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
      const current = sql`EXISTS (
        SELECT 1 FROM environments e WHERE e.id = ${claim.environmentId} AND e.current_revision_id = ${claim.revisionId} FOR SHARE
      ) AND (
        SELECT t.id || ' ' || t.linked_fingerprint FROM environment_custom_image_templates t
        WHERE t.environment_id = ${claim.environmentId} AND t.status = 'active' FOR SHARE
      ) IS NOT DISTINCT FROM ${activeSeen}::text`;
      const rows = await db
        .update(sandboxes)
        .set({
          pooled: false,
          source: 'warm_pool',
          ...claim.owner,
          lastActivityAt: claim.at,
          updatedAt: claim.at,
        })
        .where(and(sql`${sandboxes.id} = ${candidate}`, eq(sandboxes.pooled, true), current))
        .returning();
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
