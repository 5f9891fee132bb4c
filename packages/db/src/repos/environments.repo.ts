import { type Environment, type EnvironmentRevision, type SandboxSpec, withSpecDefaults } from '@sandcast/core';
import { and, asc, desc, eq } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { environmentRevisions, environments } from '../schema.ts';

export interface NewEnvironment {
  name: string;
  provider: string;
  config: Record<string, unknown>;
  /** Default: the default spec. */
  spec?: SandboxSpec | undefined;
  /** The provider connection, for providers that need one. */
  connectionId?: string | null | undefined;
}

export interface EnvironmentChange {
  name?: string | undefined;
  /** When provider or config is given, revision N+1 is inserted. */
  provider?: string | undefined;
  config?: Record<string, unknown> | undefined;
  /** A new spec also inserts revision N+1. */
  spec?: SandboxSpec | undefined;
  /** A new connection (null clears it); not a revision: it says whose account, not what the sandbox is. */
  connectionId?: string | null | undefined;
  /** Compare-and-set guard: the revision the caller read. */
  expectedRevisionId: string;
}

type EnvRow = typeof environments.$inferSelect;
type RevisionRow = typeof environmentRevisions.$inferSelect;

const toRevision = (row: RevisionRow): EnvironmentRevision => ({
  id: row.id,
  environmentId: row.environmentId,
  number: row.number,
  provider: row.provider,
  config: row.config,
  spec: withSpecDefaults(row.spec),
  createdAt: row.createdAt.toISOString(),
});

const toEnvironment = (row: EnvRow, revision: RevisionRow): Environment => ({
  id: row.id,
  name: row.name,
  provider: row.provider,
  config: row.config,
  spec: withSpecDefaults(row.spec),
  connectionId: row.connectionId ?? null,
  currentRevision: { id: revision.id, number: revision.number, createdAt: revision.createdAt.toISOString() },
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

/**
 * Environments and their immutable revisions. Config is stored as given (the server encrypts
 * secret fields before it gets here). Updates are compare-and-set on the current revision.
 */
export function createEnvironmentsRepo(db: Db) {
  const selectJoined = () =>
    db
      .select({ env: environments, revision: environmentRevisions })
      .from(environments)
      .innerJoin(environmentRevisions, eq(environmentRevisions.id, environments.currentRevisionId));

  return {
    async list(): Promise<Environment[]> {
      const rows = await selectJoined().orderBy(asc(environments.name));
      return rows.map((r) => toEnvironment(r.env, r.revision));
    },

    async get(id: string): Promise<Environment | null> {
      const rows = await selectJoined().where(eq(environments.id, id));
      return rows[0] ? toEnvironment(rows[0].env, rows[0].revision) : null;
    },

    async getByName(name: string): Promise<Environment | null> {
      const rows = await selectJoined().where(eq(environments.name, name));
      return rows[0] ? toEnvironment(rows[0].env, rows[0].revision) : null;
    },

    /** Inserts the environment and its revision 1. A duplicate name throws a unique violation. */
    async insert(input: NewEnvironment): Promise<Environment> {
      const id = newId('env');
      const revisionId = newId('rev');
      const now = new Date();
      const [env] = await db
        .insert(environments)
        .values({
          id,
          name: input.name,
          provider: input.provider,
          config: input.config,
          spec: { ...(input.spec ?? {}) },
          connectionId: input.connectionId ?? null,
          currentRevisionId: revisionId,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      const [revision] = await db
        .insert(environmentRevisions)
        .values({
          id: revisionId,
          environmentId: id,
          number: 1,
          provider: input.provider,
          config: input.config,
          spec: { ...(input.spec ?? {}) },
          createdAt: now,
        })
        .returning();
      return toEnvironment(env!, revision!);
    },

    /**
     * Applies a change if the environment is still at `expectedRevisionId`; returns null when it
     * moved on (the caller answers 409) or no longer exists.
     */
    async update(id: string, change: EnvironmentChange): Promise<{ environment: Environment; newRevision: boolean } | null> {
      const current = await selectJoined().where(eq(environments.id, id));
      const row = current[0];
      if (!row || row.env.currentRevisionId !== change.expectedRevisionId) return null;
      const newRevision = change.provider !== undefined || change.config !== undefined || change.spec !== undefined;
      const provider = change.provider ?? row.env.provider;
      const config = change.config ?? row.env.config;
      const spec: Record<string, unknown> = change.spec ? { ...change.spec } : row.env.spec;
      const now = new Date();
      let revision = row.revision;
      if (newRevision) {
        const [inserted] = await db
          .insert(environmentRevisions)
          .values({ id: newId('rev'), environmentId: id, number: row.revision.number + 1, provider, config, spec, createdAt: now })
          .returning();
        revision = inserted!;
      }
      const updated = await db
        .update(environments)
        .set({
          name: change.name ?? row.env.name,
          provider,
          config,
          spec,
          ...(change.connectionId !== undefined ? { connectionId: change.connectionId } : {}),
          currentRevisionId: revision.id,
          updatedAt: now,
        })
        .where(and(eq(environments.id, id), eq(environments.currentRevisionId, change.expectedRevisionId)))
        .returning();
      if (!updated[0]) return null;
      return { environment: toEnvironment(updated[0], revision), newRevision };
    },

    async delete(id: string): Promise<boolean> {
      const deleted = await db.delete(environments).where(eq(environments.id, id)).returning({ id: environments.id });
      return deleted.length > 0;
    },

    /** Newest first. */
    /** Names of the environments that use a connection (a delete refuses while there are any). */
    async namesUsingConnection(connectionId: string): Promise<string[]> {
      const rows = await db
        .select({ name: environments.name })
        .from(environments)
        .where(eq(environments.connectionId, connectionId))
        .orderBy(asc(environments.name));
      return rows.map((r) => r.name);
    },

    async revisions(environmentId: string): Promise<EnvironmentRevision[]> {
      const rows = await db
        .select()
        .from(environmentRevisions)
        .where(eq(environmentRevisions.environmentId, environmentId))
        .orderBy(desc(environmentRevisions.number));
      return rows.map(toRevision);
    },

    async getRevision(revisionId: string): Promise<EnvironmentRevision | null> {
      const rows = await db.select().from(environmentRevisions).where(eq(environmentRevisions.id, revisionId));
      return rows[0] ? toRevision(rows[0]) : null;
    },
  };
}
