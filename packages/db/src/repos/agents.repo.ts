import type { Agent, AgentCapability, AgentVersion, SandboxPolicy } from '@sandcast/core';
import { and, asc, desc, eq, isNull } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { agents, agentVersions } from '../schema.ts';

type AgentRow = typeof agents.$inferSelect;
type VersionRow = typeof agentVersions.$inferSelect;

const toVersion = (row: VersionRow): AgentVersion => ({
  id: row.id,
  agentId: row.agentId,
  number: row.number,
  sandboxPolicy: row.sandboxPolicy,
  capabilities: row.capabilities,
  createdAt: row.createdAt.toISOString(),
});

const toAgent = (row: AgentRow, version: VersionRow): Agent => ({
  id: row.id,
  name: row.name,
  displayName: row.displayName,
  description: row.description,
  currentVersion: toVersion(version),
  archivedAt: row.archivedAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export interface NewAgent {
  name: string;
  displayName: string | null;
  description: string | null;
  sandboxPolicy: SandboxPolicy;
  capabilities: AgentCapability[];
}

export interface AgentChange {
  displayName?: string | null | undefined;
  description?: string | null | undefined;
  /** When policy or capabilities are given, version N+1 is inserted. */
  sandboxPolicy?: SandboxPolicy | undefined;
  capabilities?: AgentCapability[] | undefined;
  /** Compare-and-set guard: the version the caller read. */
  expectedVersionId: string;
}

/** Agents and their immutable versions. Updates are compare-and-set on the current version. */
export function createAgentsRepo(db: Db) {
  const selectJoined = () =>
    db
      .select({ agent: agents, version: agentVersions })
      .from(agents)
      .innerJoin(agentVersions, eq(agentVersions.id, agents.currentVersionId));

  return {
    /** By name; archived agents only when asked for. */
    async list(options: { includeArchived?: boolean } = {}): Promise<Agent[]> {
      const query = selectJoined();
      const rows = await (options.includeArchived ? query : query.where(isNull(agents.archivedAt))).orderBy(asc(agents.name));
      return rows.map((r) => toAgent(r.agent, r.version));
    },

    async get(id: string): Promise<Agent | null> {
      const rows = await selectJoined().where(eq(agents.id, id));
      return rows[0] ? toAgent(rows[0].agent, rows[0].version) : null;
    },

    async getByName(name: string): Promise<Agent | null> {
      const rows = await selectJoined().where(eq(agents.name, name));
      return rows[0] ? toAgent(rows[0].agent, rows[0].version) : null;
    },

    /** Inserts the agent and its version 1. A duplicate name throws a unique violation. */
    async insert(input: NewAgent): Promise<Agent> {
      const id = newId('agt');
      const versionId = newId('agv');
      const now = new Date();
      const [agent] = await db
        .insert(agents)
        .values({
          id,
          name: input.name,
          displayName: input.displayName,
          description: input.description,
          currentVersionId: versionId,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      const [version] = await db
        .insert(agentVersions)
        .values({
          id: versionId,
          agentId: id,
          number: 1,
          sandboxPolicy: input.sandboxPolicy,
          capabilities: input.capabilities,
          createdAt: now,
        })
        .returning();
      return toAgent(agent!, version!);
    },

    /** Applies a change if the agent is still at `expectedVersionId`; null when it moved on or is gone. */
    async update(id: string, change: AgentChange): Promise<{ agent: Agent; newVersion: boolean } | null> {
      const [row] = await selectJoined().where(eq(agents.id, id));
      if (!row || row.agent.currentVersionId !== change.expectedVersionId) return null;
      const newVersion = change.sandboxPolicy !== undefined || change.capabilities !== undefined;
      const now = new Date();
      let version = row.version;
      if (newVersion) {
        const [inserted] = await db
          .insert(agentVersions)
          .values({
            id: newId('agv'),
            agentId: id,
            number: row.version.number + 1,
            sandboxPolicy: change.sandboxPolicy ?? row.version.sandboxPolicy,
            capabilities: change.capabilities ?? row.version.capabilities,
            createdAt: now,
          })
          .returning();
        version = inserted!;
      }
      const updated = await db
        .update(agents)
        .set({
          displayName: change.displayName === undefined ? row.agent.displayName : change.displayName,
          description: change.description === undefined ? row.agent.description : change.description,
          currentVersionId: version.id,
          updatedAt: now,
        })
        .where(and(eq(agents.id, id), eq(agents.currentVersionId, change.expectedVersionId)))
        .returning();
      if (!updated[0]) return null;
      return { agent: toAgent(updated[0], version), newVersion };
    },

    /** Archives (never erases): its versions and sessions stay readable. Null when there is no such agent. */
    async archive(id: string, at: Date): Promise<Agent | null> {
      const rows = await db
        .update(agents)
        .set({ archivedAt: at, updatedAt: at })
        .where(and(eq(agents.id, id), isNull(agents.archivedAt)))
        .returning({ id: agents.id });
      if (!rows[0]) return null;
      const [row] = await selectJoined().where(eq(agents.id, id));
      return row ? toAgent(row.agent, row.version) : null;
    },

    /** Newest first. */
    async versions(agentId: string): Promise<AgentVersion[]> {
      const rows = await db.select().from(agentVersions).where(eq(agentVersions.agentId, agentId)).orderBy(desc(agentVersions.number));
      return rows.map(toVersion);
    },

    async getVersion(versionId: string): Promise<AgentVersion | null> {
      const rows = await db.select().from(agentVersions).where(eq(agentVersions.id, versionId));
      return rows[0] ? toVersion(rows[0]) : null;
    },
  };
}
