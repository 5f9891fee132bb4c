import { type Sandbox, type SandboxDesiredStatus, type SandboxStatus, sandboxMachine } from '@sandcast/core';
import { and, desc, eq, inArray, ne } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { sandboxes } from '../schema.ts';

type Row = typeof sandboxes.$inferSelect;

const toSandbox = (row: Row): Sandbox => ({
  id: row.id,
  environmentId: row.environmentId,
  environmentRevisionId: row.environmentRevisionId,
  imageId: row.imageId,
  provider: row.provider,
  providerInstanceId: row.providerInstanceId,
  desiredStatus: row.desiredStatus,
  status: row.status,
  failureReason: row.failureReason,
  createdByRole: row.createdByRole,
  createdByKeyId: row.createdByKeyId,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export interface NewSandbox {
  environmentId: string;
  environmentRevisionId: string;
  imageId: string | null;
  provider: string;
  createdByRole: string;
  createdByKeyId: string | null;
}

export interface SandboxPatch {
  providerInstanceId?: string | null;
  desiredStatus?: SandboxDesiredStatus;
  status?: SandboxStatus;
  failureReason?: string | null;
}

export function createSandboxesRepo(db: Db) {
  return {
    async insert(input: NewSandbox): Promise<Sandbox> {
      const [row] = await db
        .insert(sandboxes)
        .values({ id: newId('sbx'), desiredStatus: 'ready', status: 'starting', ...input })
        .returning();
      return toSandbox(row!);
    },
    async get(id: string): Promise<Sandbox | null> {
      const rows = await db.select().from(sandboxes).where(eq(sandboxes.id, id));
      return rows[0] ? toSandbox(rows[0]) : null;
    },
    /** Newest first; deleted ones are left out unless asked for. */
    async list(options: { includeDeleted?: boolean } = {}): Promise<Sandbox[]> {
      const query = db.select().from(sandboxes);
      const rows = await (options.includeDeleted ? query : query.where(ne(sandboxes.status, 'deleted'))).orderBy(
        desc(sandboxes.createdAt),
        desc(sandboxes.id),
      );
      return rows.map(toSandbox);
    },
    /**
     * Applies `patch`. A status change is compare-and-set on the statuses the core machine
     * allows: from a status with no edge to the new one it throws InvalidTransition (a 409).
     * Null when there is no such sandbox.
     */
    async update(id: string, patch: SandboxPatch): Promise<Sandbox | null> {
      const to = patch.status;
      const rows = await db
        .update(sandboxes)
        .set({ ...patch, updatedAt: new Date() })
        .where(to ? and(eq(sandboxes.id, id), inArray(sandboxes.status, sandboxMachine.sourcesOf(to))) : eq(sandboxes.id, id))
        .returning();
      if (rows[0]) return toSandbox(rows[0]);
      if (!to) return null;
      const [current] = await db.select({ status: sandboxes.status }).from(sandboxes).where(eq(sandboxes.id, id));
      if (current) sandboxMachine.transition(current.status, to);
      return null;
    },
  };
}
