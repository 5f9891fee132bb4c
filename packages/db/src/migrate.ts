import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
/** Held while migrating so two servers starting together don't race. */
const MIGRATION_LOCK_ID = 7_420_001;

export interface Migration {
  name: string;
  sql: string;
}

/** The numbered SQL files, in order. */
export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((n) => /^\d{4}_[a-z0-9_]+\.sql$/.test(n)).sort();
  return Promise.all(names.map(async (name) => ({ name, sql: await readFile(`${dir}/${name}`, 'utf8') })));
}

/** The minimum a driver must offer to be migrated: run a script, query rows, in a transaction. */
export interface MigrationTarget {
  exec(sql: string): Promise<void>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs `fn` on one connection inside BEGIN/COMMIT. */
  transaction(fn: (tx: Omit<MigrationTarget, 'transaction'>) => Promise<void>): Promise<void>;
}

/** Applies every migration not yet recorded, each in its own transaction. Returns the names applied. */
export async function migrate(target: MigrationTarget, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await loadMigrations());
  const applied: string[] = [];
  await target.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS sandcast_migrations (
      name text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await tx.query<{ name: string }>('SELECT name FROM sandcast_migrations')).map((r) => r.name));
    for (const migration of all) {
      if (done.has(migration.name)) continue;
      try {
        await tx.exec(migration.sql);
      } catch (error) {
        throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      await tx.query('INSERT INTO sandcast_migrations (name) VALUES ($1)', [migration.name]);
      applied.push(migration.name);
    }
  });
  return applied;
}
