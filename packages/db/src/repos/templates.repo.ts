import {
  type BootSource,
  type CustomImageKind,
  type CustomImageStatus,
  type CustomImageTemplate,
  customImageMachine,
} from '@sandcast/core';
import { and, desc, eq, inArray, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { customImageTemplates as templates } from '../schema.ts';

type Row = typeof templates.$inferSelect;

const toTemplate = (row: Row): CustomImageTemplate => ({
  id: row.id,
  environmentId: row.environmentId,
  provider: row.provider,
  kind: row.kind,
  providerRef: row.providerRef,
  digest: row.digest,
  sizeBytes: row.sizeBytes,
  status: row.status,
  refreshedFromTemplateId: row.refreshedFromTemplateId,
  setupSessionId: row.setupSessionId,
  capturedRevisionId: row.capturedRevisionId,
  capturedFingerprint: row.capturedFingerprint,
  linkedRevisionId: row.linkedRevisionId,
  linkedFingerprint: row.linkedFingerprint,
  linkedBootSource: row.linkedBootSource,
  metadata: row.metadata,
  failureReason: row.failureReason,
  capturedAt: row.capturedAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  supersededByTemplateId: row.supersededByTemplateId,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export interface NewTemplate {
  /** Chosen by the caller when it must be known before the insert (to supersede with it). */
  id?: string | undefined;
  environmentId: string;
  provider: string;
  kind: CustomImageKind;
  providerRef: string | null;
  digest: string | null;
  sizeBytes: number | null;
  status: 'active' | 'failed';
  refreshedFromTemplateId: string | null;
  setupSessionId: string | null;
  revisionId: string;
  fingerprint: string;
  bootSource: BootSource;
  metadata: Record<string, unknown>;
  failureReason: string | null;
}

/**
 * Custom images. The database holds one-active-per-environment (partial unique index) and the
 * immutability of identity fields (trigger); status changes are compare-and-set on the statuses
 * the core machine allows.
 */
export function createTemplatesRepo(db: Db) {
  return {
    async insert(input: NewTemplate): Promise<CustomImageTemplate> {
      const [row] = await db
        .insert(templates)
        .values({
          id: input.id ?? newId('img'),
          environmentId: input.environmentId,
          provider: input.provider,
          kind: input.kind,
          providerRef: input.providerRef,
          digest: input.digest,
          sizeBytes: input.sizeBytes,
          status: input.status,
          refreshedFromTemplateId: input.refreshedFromTemplateId,
          setupSessionId: input.setupSessionId,
          capturedRevisionId: input.revisionId,
          capturedFingerprint: input.fingerprint,
          linkedRevisionId: input.revisionId,
          linkedFingerprint: input.fingerprint,
          linkedBootSource: input.bootSource,
          metadata: input.metadata,
          failureReason: input.failureReason,
        })
        .returning();
      return toTemplate(row!);
    },

    async get(id: string): Promise<CustomImageTemplate | null> {
      const rows = await db.select().from(templates).where(eq(templates.id, id));
      return rows[0] ? toTemplate(rows[0]) : null;
    },

    async active(environmentId: string): Promise<CustomImageTemplate | null> {
      const rows = await db
        .select()
        .from(templates)
        .where(and(eq(templates.environmentId, environmentId), eq(templates.status, 'active')));
      return rows[0] ? toTemplate(rows[0]) : null;
    },

    /** Every image of the environment, newest first. */
    async list(environmentId: string): Promise<CustomImageTemplate[]> {
      const rows = await db
        .select()
        .from(templates)
        .where(eq(templates.environmentId, environmentId))
        .orderBy(desc(templates.createdAt), desc(templates.id));
      return rows.map(toTemplate);
    },

    /** The superseded image that `templateId` replaced (where Rollback goes back to). */
    async supersededBy(templateId: string): Promise<CustomImageTemplate | null> {
      const rows = await db
        .select()
        .from(templates)
        .where(and(eq(templates.supersededByTemplateId, templateId), eq(templates.status, 'superseded')))
        .orderBy(desc(templates.updatedAt))
        .limit(1);
      return rows[0] ? toTemplate(rows[0]) : null;
    },

    /**
     * Moves an image to `to`, only from a status the core machine allows. An image whose status
     * has no edge to `to` throws InvalidTransition (a 409); null when there is no such image.
     */
    async setStatus(
      id: string,
      to: CustomImageStatus,
      patch: { supersededByTemplateId?: string | null } = {},
    ): Promise<CustomImageTemplate | null> {
      const rows = await db
        .update(templates)
        .set({
          status: to,
          updatedAt: new Date(),
          ...(patch.supersededByTemplateId !== undefined ? { supersededByTemplateId: patch.supersededByTemplateId } : {}),
        })
        .where(and(eq(templates.id, id), inArray(templates.status, customImageMachine.sourcesOf(to))))
        .returning();
      if (rows[0]) return toTemplate(rows[0]);
      const [current] = await db.select({ status: templates.status }).from(templates).where(eq(templates.id, id));
      if (current) customImageMachine.transition(current.status, to);
      return null;
    },

    /** Supersedes whatever image is active for the environment now; null if none is. */
    async supersedeActive(environmentId: string, supersededBy: string): Promise<CustomImageTemplate | null> {
      const superseded = customImageMachine.transition('active', 'superseded');
      const rows = await db
        .update(templates)
        .set({ status: superseded, supersededByTemplateId: supersededBy, updatedAt: new Date() })
        .where(and(eq(templates.environmentId, environmentId), eq(templates.status, 'active')))
        .returning();
      return rows[0] ? toTemplate(rows[0]) : null;
    },

    /** Links the active image to another revision of its environment. */
    async relink(
      id: string,
      link: { revisionId: string; fingerprint: string; bootSource: BootSource },
    ): Promise<CustomImageTemplate | null> {
      const rows = await db
        .update(templates)
        .set({
          linkedRevisionId: link.revisionId,
          linkedFingerprint: link.fingerprint,
          linkedBootSource: link.bootSource,
          updatedAt: new Date(),
        })
        .where(and(eq(templates.id, id), eq(templates.status, 'active')))
        .returning();
      return rows[0] ? toTemplate(rows[0]) : null;
    },

    async touchLastUsed(id: string): Promise<void> {
      await db.update(templates).set({ lastUsedAt: sql`now()` }).where(eq(templates.id, id));
    },

    /** Whether any custom image, in any status, names one of `refs` as its provider artefact or digest. */
    async isReferenced(provider: string, refs: string[]): Promise<boolean> {
      if (refs.length === 0) return false;
      const rows = await db
        .select({ id: templates.id })
        .from(templates)
        .where(and(eq(templates.provider, provider), or(inArray(templates.providerRef, refs), inArray(templates.digest, refs))))
        .limit(1);
      return rows.length > 0;
    },

    /** Images other than `exceptId` that still point at a provider artefact and may boot again. */
    async countReferencing(provider: string, providerRef: string, exceptId: string): Promise<number> {
      const [row] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(templates)
        .where(
          and(
            eq(templates.provider, provider),
            eq(templates.providerRef, providerRef),
            ne(templates.id, exceptId),
            inArray(templates.status, ['active', 'superseded']),
          ),
        );
      return row?.n ?? 0;
    },
  };
}
