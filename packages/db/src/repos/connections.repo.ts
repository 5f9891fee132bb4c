import type { Connection } from '@sandcast/core';
import { asc, eq } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { providerConnections } from '../schema.ts';

export interface NewConnection {
  name: string;
  provider: string;
  config: Record<string, unknown>;
  /** Already sealed by the caller. */
  secrets: Record<string, unknown>;
}

export interface ConnectionChange {
  name?: string | undefined;
  config?: Record<string, unknown> | undefined;
  secrets?: Record<string, unknown> | undefined;
}

type Row = typeof providerConnections.$inferSelect;

const toConnection = (row: Row): Connection => ({
  id: row.id,
  name: row.name,
  provider: row.provider,
  config: row.config,
  secrets: row.secrets,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

/** Provider connections. Secrets arrive sealed; this layer never sees a plaintext credential. */
export function createConnectionsRepo(db: Db) {
  return {
    async list(provider?: string): Promise<Connection[]> {
      const rows = await db
        .select()
        .from(providerConnections)
        .where(provider === undefined ? undefined : eq(providerConnections.provider, provider))
        .orderBy(asc(providerConnections.name));
      return rows.map(toConnection);
    },

    async get(id: string): Promise<Connection | null> {
      const rows = await db.select().from(providerConnections).where(eq(providerConnections.id, id));
      return rows[0] ? toConnection(rows[0]) : null;
    },

    /** A duplicate name throws a unique violation (`provider_connections_name_key`). */
    async insert(input: NewConnection): Promise<Connection> {
      const now = new Date();
      const [row] = await db
        .insert(providerConnections)
        .values({ id: newId('conn'), ...input, createdAt: now, updatedAt: now })
        .returning();
      return toConnection(row!);
    },

    async update(id: string, change: ConnectionChange): Promise<Connection | null> {
      const [row] = await db
        .update(providerConnections)
        .set({
          ...(change.name !== undefined ? { name: change.name } : {}),
          ...(change.config !== undefined ? { config: change.config } : {}),
          ...(change.secrets !== undefined ? { secrets: change.secrets } : {}),
          updatedAt: new Date(),
        })
        .where(eq(providerConnections.id, id))
        .returning();
      return row ? toConnection(row) : null;
    },

    async delete(id: string): Promise<boolean> {
      const deleted = await db.delete(providerConnections).where(eq(providerConnections.id, id)).returning({ id: providerConnections.id });
      return deleted.length > 0;
    },
  };
}
