import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { sandboxPorts } from '../schema.ts';

export interface SandboxPortRecord {
  sandboxId: string;
  port: number;
  visibility: 'private' | 'public';
  createdAt: string;
}

type Row = typeof sandboxPorts.$inferSelect;
const toRecord = (row: Row): SandboxPortRecord => ({
  sandboxId: row.sandboxId,
  port: row.port,
  visibility: row.visibility,
  createdAt: row.createdAt.toISOString(),
});

/** A sandbox's open ports. Opening an open port again updates its visibility. */
export function createSandboxPortsRepo(db: Db) {
  return {
    async upsert(input: { sandboxId: string; port: number; visibility: 'private' | 'public' }): Promise<SandboxPortRecord> {
      const [row] = await db
        .insert(sandboxPorts)
        .values(input)
        .onConflictDoUpdate({ target: [sandboxPorts.sandboxId, sandboxPorts.port], set: { visibility: input.visibility } })
        .returning();
      return toRecord(row!);
    },
    async get(sandboxId: string, port: number): Promise<SandboxPortRecord | null> {
      const rows = await db
        .select()
        .from(sandboxPorts)
        .where(and(eq(sandboxPorts.sandboxId, sandboxId), eq(sandboxPorts.port, port)));
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async list(sandboxId: string): Promise<SandboxPortRecord[]> {
      const rows = await db.select().from(sandboxPorts).where(eq(sandboxPorts.sandboxId, sandboxId)).orderBy(asc(sandboxPorts.port));
      return rows.map(toRecord);
    },
    /** Closes one port; the record it had, or null when it was not open. */
    async delete(sandboxId: string, port: number): Promise<SandboxPortRecord | null> {
      const rows = await db
        .delete(sandboxPorts)
        .where(and(eq(sandboxPorts.sandboxId, sandboxId), eq(sandboxPorts.port, port)))
        .returning();
      return rows[0] ? toRecord(rows[0]) : null;
    },
    /** Closes every port of a sandbox (it is being deleted). */
    async deleteAll(sandboxId: string): Promise<number> {
      const rows = await db.delete(sandboxPorts).where(eq(sandboxPorts.sandboxId, sandboxId)).returning();
      return rows.length;
    },
  };
}
