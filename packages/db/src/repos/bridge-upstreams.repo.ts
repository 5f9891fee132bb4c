import { asc, eq } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { bridgeUpstreams } from '../schema.ts';

/** A stored bridge upstream; `credential` is as sealed by the server, never plaintext. */
export interface BridgeUpstreamRow {
  name: string;
  baseUrl: string;
  allowedPaths: string[];
  credential: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface BridgeUpstreamWrite {
  name: string;
  baseUrl: string;
  allowedPaths: string[];
  /** Already sealed by the caller; undefined on a replace keeps the stored one. */
  credential?: Record<string, unknown> | undefined;
}

type Row = typeof bridgeUpstreams.$inferSelect;

const toUpstream = (row: Row): BridgeUpstreamRow => ({
  name: row.name,
  baseUrl: row.baseUrl,
  allowedPaths: row.allowedPaths,
  credential: row.credential,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

/** Bridge upstreams, keyed by name. */
export function createBridgeUpstreamsRepo(db: Db) {
  return {
    async list(): Promise<BridgeUpstreamRow[]> {
      const rows = await db.select().from(bridgeUpstreams).orderBy(asc(bridgeUpstreams.name));
      return rows.map(toUpstream);
    },

    async get(name: string): Promise<BridgeUpstreamRow | null> {
      const rows = await db.select().from(bridgeUpstreams).where(eq(bridgeUpstreams.name, name));
      return rows[0] ? toUpstream(rows[0]) : null;
    },

    /**
     * Creates or replaces the upstream named `input.name`. A new one needs a credential (null
     * when it has none); a replace without one keeps the stored credential.
     */
    async put(input: BridgeUpstreamWrite): Promise<BridgeUpstreamRow | null> {
      const now = new Date();
      const fields = { baseUrl: input.baseUrl, allowedPaths: input.allowedPaths, updatedAt: now };
      if (input.credential === undefined) {
        const [row] = await db.update(bridgeUpstreams).set(fields).where(eq(bridgeUpstreams.name, input.name)).returning();
        return row ? toUpstream(row) : null;
      }
      const [row] = await db
        .insert(bridgeUpstreams)
        .values({ name: input.name, ...fields, credential: input.credential, createdAt: now })
        .onConflictDoUpdate({ target: bridgeUpstreams.name, set: { ...fields, credential: input.credential } })
        .returning();
      return toUpstream(row!);
    },

    async delete(name: string): Promise<boolean> {
      const deleted = await db.delete(bridgeUpstreams).where(eq(bridgeUpstreams.name, name)).returning({ name: bridgeUpstreams.name });
      return deleted.length > 0;
    },
  };
}
