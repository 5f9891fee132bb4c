import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SandcastClient } from '@sandcast/client';
import { createFakeProvider } from '@sandcast/provider-fake';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

const SERVER = fileURLToPath(new URL('../../apps/server/bin/sandcast-server.mjs', import.meta.url));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

async function startServerProcess(env: Record<string, string>): Promise<{ child: ChildProcess; client: SandcastClient }> {
  const port = String(20_000 + Math.floor(Math.random() * 30_000));
  const child = spawn(process.execPath, [SERVER], {
    env: {
      ...process.env,
      ...env,
      SANDCAST_PORT: port,
      SANDCAST_ENABLE_FAKE_PROVIDER: '1',
      SANDCAST_LOG_LEVEL: 'warn',
      SANDCAST_SSH_PORT: '0',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  const client = new SandcastClient({ baseUrl: `http://127.0.0.1:${port}` });
  for (let i = 0; i < 150; i++) {
    if (
      await client.health().then(
        () => true,
        () => false,
      )
    )
      return { child, client };
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the server did not come up');
}

async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL!;
  const name = `sandcast_crash_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

const databases = [
  { kind: 'pglite', skipReason: null as string | null },
  { kind: 'postgres', skipReason: process.env.TEST_DATABASE_URL ? null : 'TEST_DATABASE_URL is not set' },
];

for (const database of databases) {
  if (database.skipReason && process.env.CI === 'true')
    throw new Error(`CI=true but ${database.kind} is unavailable: ${database.skipReason}`);
  describe.skipIf(database.skipReason !== null)(`a server killed during a capture [${database.kind}]`, () => {
    it('resolves the session on restart, keeps the previous image active, and removes the setup sandbox', async () => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-crash-'));
      const pgDb = database.kind === 'postgres' ? await freshPostgres() : null;
      const env = { SANDCAST_DATA_DIR: dataDir, ...(pgDb ? { DATABASE_URL: pgDb.url } : {}) };
      try {
        const first = await startServerProcess(env);
        const client = first.client;
        await client.settings.update({ experimental: { enableEnvironments: true } });
        const environment = await client.environments.create({ name: 'crashy', provider: 'fake', config: {} });
        const setup = await client.customImages.startSetup(environment.id);
        await client.customImages.exec(setup.session.id, { command: ['sh', '-c', 'echo kept > kept.txt'] });
        const v1 = (await client.customImages.finish(setup.session.id)).template;

        // Make the next capture slow, keep the image linked, and kill the server mid-capture.
        await client.environments.update(environment.id, { config: { simulate: { captureDelayMs: 60_000 } } });
        await client.customImages.relink(environment.id, { confirmBootSourceDrift: true });
        const doomed = await client.customImages.startSetup(environment.id);
        void client.customImages.finish(doomed.session.id).catch(() => undefined);
        for (let i = 0; i < 100 && (await client.customImages.getSetup(doomed.session.id)).session.status !== 'capturing'; i++) {
          await new Promise((r) => setTimeout(r, 50));
        }
        expect((await client.customImages.getSetup(doomed.session.id)).session.status).toBe('capturing');
        first.child.kill('SIGKILL');
        await new Promise((r) => first.child.once('exit', r));

        const second = await startServerProcess(env);
        const after = await second.client.customImages.getSetup(doomed.session.id);
        expect(after.session).toMatchObject({
          status: 'failed',
          failureReason: expect.stringContaining('server stopped during the capture'),
        });
        const overview = await second.client.customImages.overview(environment.id);
        expect(overview.activeTemplate?.id).toBe(v1.id);
        expect(overview.activeSession).toBeNull();
        const leases = await createFakeProvider({ dataDir }).listInstances();
        expect(leases.filter((l) => l.ownerKind === 'setup')).toEqual([]);

        // And the environment works again: a new capture goes through.
        await second.client.environments.update(environment.id, { config: {} });
        await second.client.customImages.relink(environment.id, { confirmBootSourceDrift: true });
        const again = await second.client.customImages.startSetup(environment.id);
        expect((await second.client.customImages.exec(again.session.id, { command: ['cat', 'kept.txt'] })).stdout).toBe('kept\n');
        await second.client.customImages.cancel(again.session.id);
        second.child.kill('SIGTERM');
        await new Promise((r) => second.child.once('exit', r));
      } finally {
        await rm(dataDir, { recursive: true, force: true });
        await pgDb?.drop();
      }
    }, 90_000);
  });
}
