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
  const openPostgres = async (): Promise<Database> => {
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
    const database = await createDb({ url: dbUrl.toString(), maxConnections: 20 });
    return {
      ...database,
      close: async () => {
        await database.close();
        const cleanup = new pg.Client({ connectionString: url });
        await cleanup.connect();
        await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
        await cleanup.end();
      },
    };
  };
  return [
    { kind: 'pglite', skipReason: null, openDatabase: openPglite, open: async () => createStore(await openPglite()) },
    { kind: 'postgres', skipReason: postgresSkip, openDatabase: openPostgres, open: async () => createStore(await openPostgres()) },
  ];
}
