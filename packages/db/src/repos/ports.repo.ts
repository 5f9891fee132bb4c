import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import type { PortsTable } from '../schema.ts';

/** An open port of a sandbox or a setup session (its `ownerId`). */
export interface PortRecord {
  ownerId: string;
  port: number;
  visibility: 'private' | 'public';
  createdAt: string;
}

const toRecord = (row: PortsTable['$inferSelect']): PortRecord => ({
  ownerId: row.ownerId,
  port: row.port,
  visibility: row.visibility,
  createdAt: row.createdAt.toISOString(),
});

/** The open ports of one kind of owner, in its table. Opening an open port again updates its visibility. */
export function createPortsRepo(db: Db, table: PortsTable) {
  const one = (ownerId: string, port: number) => and(eq(table.ownerId, ownerId), eq(table.port, port));
  return {
    async upsert(input: { ownerId: string; port: number; visibility: 'private' | 'public' }): Promise<PortRecord> {
      const [row] = await db
        .insert(table)
        .values(input)
        .onConflictDoUpdate({ target: [table.ownerId, table.port], set: { visibility: input.visibility } })
        .returning();
      return toRecord(row!);
    },
    async get(ownerId: string, port: number): Promise<PortRecord | null> {
      const rows = await db.select().from(table).where(one(ownerId, port));
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async list(ownerId: string): Promise<PortRecord[]> {
      const rows = await db.select().from(table).where(eq(table.ownerId, ownerId)).orderBy(asc(table.port));
      return rows.map(toRecord);
    },
    /** Closes one port; the record it had, or null when it was not open. */
    async delete(ownerId: string, port: number): Promise<PortRecord | null> {
      const rows = await db.delete(table).where(one(ownerId, port)).returning();
      return rows[0] ? toRecord(rows[0]) : null;
    },
    /** Closes every port of an owner (it is being deleted, or its sandbox is going). */
    async deleteAll(ownerId: string): Promise<number> {
      const rows = await db.delete(table).where(eq(table.ownerId, ownerId)).returning();
      return rows.length;
    },
  };
}
