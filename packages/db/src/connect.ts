import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { type MigrationTarget, migrate } from './migrate.ts';
import { type Schema, schema } from './schema.ts';

export type DatabaseKind = 'pglite' | 'postgres';
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  kind: DatabaseKind;
  db: Db;
  /**
   * Calls `listener` with the text of every statement sent through `db` (a transaction's BEGIN and
   * COMMIT are the driver's own and not all drivers report them); returns the unsubscribe. For
   * tests and benchmarks that count round trips; nothing listens in a running server.
   */
  onQuery(listener: (sql: string) => void): () => void;
  close(): Promise<void>;
}

/** The statement observers of one database, as the drizzle logger both drivers accept. */
function queryObservers() {
  const listeners = new Set<(sql: string) => void>();
  return {
    logger: {
      logQuery(query: string) {
        for (const listener of listeners) listener(query);
      },
    },
    onQuery(listener: (sql: string) => void) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

export type DatabaseOptions =
  /** Embedded Postgres (PGlite) in this directory; `memory://` keeps it in memory. */
  | { pglite: string }
  /** A real Postgres, e.g. postgres://user@127.0.0.1:5432/sandcast. */
  | { url: string; maxConnections?: number };

/** Opens the database and applies pending migrations before returning. */
export async function createDb(options: DatabaseOptions): Promise<Database> {
  if ('pglite' in options) {
    if (!options.pglite.startsWith('memory://')) await mkdir(options.pglite, { recursive: true });
    const client = await PGlite.create(options.pglite);
    await migrate(pgliteTarget(client));
    const observers = queryObservers();
    return {
      kind: 'pglite',
      db: drizzlePglite({ client, schema, logger: observers.logger }) as unknown as Db,
      onQuery: observers.onQuery,
      close: () => client.close(),
    };
  }
  const pool = new pg.Pool({ connectionString: options.url, max: options.maxConnections ?? 10 });
  pool.on('error', () => undefined); // a dropped idle connection is replaced on next use
  try {
    await migrate(pgTarget(pool));
  } catch (error) {
    await pool.end();
    throw error;
  }
  const observers = queryObservers();
  return {
    kind: 'postgres',
    db: drizzlePg({ client: pool, schema, logger: observers.logger }) as unknown as Db,
    onQuery: observers.onQuery,
    close: () => pool.end(),
  };
}

function pgliteTarget(client: PGlite): MigrationTarget {
  return {
    exec: async (sql) => {
      await client.exec(sql);
    },
    query: async <T>(sql: string, params?: unknown[]) => (await client.query<T>(sql, params)).rows,
    transaction: async (fn) => {
      await client.transaction(async (tx) =>
        fn({
          exec: async (sql) => {
            await tx.exec(sql);
          },
          query: async <T>(sql: string, params?: unknown[]) => (await tx.query<T>(sql, params)).rows,
        }),
      );
    },
  };
}

function pgTarget(pool: pg.Pool): MigrationTarget {
  const on = (client: pg.Pool | pg.PoolClient): Omit<MigrationTarget, 'transaction'> => ({
    exec: async (sql) => {
      await client.query(sql);
    },
    query: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[],
  });
  return {
    ...on(pool),
    transaction: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await fn(on(client));
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
  };
}
