import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createDb, type Database, type DatabaseKind } from '../connect.ts';
import { createStore, type Store } from '../store.ts';

export interface TestDatabase {
  kind: DatabaseKind;
  /** Why this database cannot be used here, or null. Under CI=true a reason is a failure. */
  skipReason: string | null;
  /** A fresh, migrated, empty database behind the repositories. */
  open(): Promise<Store>;
  /** The same, as the raw drizzle database (for tests that must bypass the repositories). */
  openDatabase(): Promise<Database>;
  /**
   * Two stores on ONE fresh database, as two servers sharing it hold them (Postgres: two
   * connection pools; PGlite: one embedded database behind both). Each closes on its own; the
   * database goes once both are closed.
   */
  openShared(): Promise<[Store, Store]>;
}

/** Handles on one database: each closes its own connection, the last one also `finish`es. */
function sharedHandles(databases: Database[], finish: () => Promise<void>): Store[] {
  let open = databases.length;
  return databases.map((database) => {
    let closed = false;
    return createStore({
      ...database,
      close: async () => {
        if (closed) return;
        closed = true;
        await database.close();
        if (--open === 0) await finish();
      },
    });
  });
}

/**
 * The databases every repository and integration test runs against: embedded PGlite always,
 * and a real Postgres when TEST_DATABASE_URL names one (scripts/services.sh starts it). Each
 * `open()` gets its own database, so test files never see each other's rows.
 */
export function testDatabases(): TestDatabase[] {
  const url = process.env.TEST_DATABASE_URL;
  const postgresSkip = url ? null : 'TEST_DATABASE_URL is not set (run scripts/services.sh to start a Postgres 15 cluster)';
  if (postgresSkip && process.env.CI === 'true') {
    throw new Error(`CI=true but Postgres-backed tests cannot run: ${postgresSkip}`);
  }
  const openPglite = () => createDb({ pglite: 'memory://' });
  /** A fresh database on the cluster: its URL, and how to drop it. */
  const createPostgresDatabase = async () => {
    const name = `sandcast_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    const dbUrl = new URL(url!);
    dbUrl.pathname = `/${name}`;
    const drop = async () => {
      const cleanup = new pg.Client({ connectionString: url });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await cleanup.end();
    };
    return { url: dbUrl.toString(), drop };
  };
  const openPostgres = async (): Promise<Database> => {
    const created = await createPostgresDatabase();
    const database = await createDb({ url: created.url, maxConnections: 20 });
    return {
      ...database,
      close: async () => {
        await database.close();
        await created.drop();
      },
    };
  };
  const openSharedPostgres = async (): Promise<[Store, Store]> => {
    const created = await createPostgresDatabase();
    // One after the other: the second finds the migrations applied.
    const first = await createDb({ url: created.url, maxConnections: 10 });
    const second = await createDb({ url: created.url, maxConnections: 10 });
    return sharedHandles([first, second], created.drop) as [Store, Store];
  };
  const openSharedPglite = async (): Promise<[Store, Store]> => {
    const database = await openPglite();
    const noClose = { ...database, close: async () => undefined };
    return sharedHandles([noClose, noClose], () => database.close()) as [Store, Store];
  };
  return [
    {
      kind: 'pglite',
      skipReason: null,
      openDatabase: openPglite,
      open: async () => createStore(await openPglite()),
      openShared: openSharedPglite,
    },
    {
      kind: 'postgres',
      skipReason: postgresSkip,
      openDatabase: openPostgres,
      open: async () => createStore(await openPostgres()),
      openShared: openSharedPostgres,
    },
  ];
}
