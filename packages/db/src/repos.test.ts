import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUniqueViolation } from './errors.ts';
import { createRepositories, type Store } from './store.ts';
import { insertSetupSession } from './testing/fixtures.ts';
import { testDatabases } from './testing/test-databases.ts';

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`repositories [${database.kind}]`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await database.open();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('reports which database it is', () => {
      expect(store.kind).toBe(database.kind);
    });

    it('stores the settings document as one row', async () => {
      expect(await store.repos.settings.get()).toBeNull();
      await store.repos.settings.put({ experimental: { enableEnvironments: true } });
      await store.repos.settings.put({ experimental: { enableEnvironments: false } });
      expect(await store.repos.settings.get()).toEqual({ experimental: { enableEnvironments: false } });
    });

    it('inserts an environment with revision 1 and refuses a duplicate name', async () => {
      const env = await store.repos.environments.insert({ name: 'build', provider: 'fake', config: { image: 'a' } });
      expect(env.currentRevision.number).toBe(1);
      expect(await store.repos.environments.getByName('build')).toEqual(env);
      const duplicate = await store.repos.environments.insert({ name: 'build', provider: 'fake', config: {} }).catch((e) => e);
      expect(isUniqueViolation(duplicate, 'environments_name_key')).toBe(true);
    });

    it('inserts revision N+1 on a config change, none on a rename; revisions are immutable', async () => {
      const env = await store.repos.environments.insert({ name: 'rev-test', provider: 'fake', config: { image: 'a' } });
      const renamed = await store.repos.environments.update(env.id, { name: 'rev-test-2', expectedRevisionId: env.currentRevision.id });
      expect(renamed?.newRevision).toBe(false);
      expect(renamed?.environment.currentRevision.number).toBe(1);
      const changed = await store.repos.environments.update(env.id, { config: { image: 'b' }, expectedRevisionId: env.currentRevision.id });
      expect(changed?.environment.currentRevision.number).toBe(2);
      expect(changed?.environment.config).toEqual({ image: 'b' });
      const revisions = await store.repos.environments.revisions(env.id);
      expect(revisions.map((r) => [r.number, r.config])).toEqual([
        [2, { image: 'b' }],
        [1, { image: 'a' }],
      ]);
    });

    it('the database itself refuses to rewrite a revision', async () => {
      const raw = await database.openDatabase();
      try {
        const { sql } = await import('drizzle-orm');
        const repos = createRepositories(raw.db);
        const env = await repos.environments.insert({ name: 'immutable', provider: 'fake', config: { image: 'a' } });
        const rewrite = await raw.db
          .execute(sql`UPDATE environment_revisions SET config = '{}'::jsonb WHERE id = ${env.currentRevision.id}`)
          .catch((e: unknown) => e);
        expect(String((rewrite as Error).cause ?? rewrite)).toMatch(/immutable/);
        expect((await repos.environments.getRevision(env.currentRevision.id))?.config).toEqual({ image: 'a' });
      } finally {
        await raw.close();
      }
    });

    it('compare-and-set: an update from a stale revision changes nothing', async () => {
      const env = await store.repos.environments.insert({ name: 'cas', provider: 'fake', config: { image: 'a' } });
      const first = await store.repos.environments.update(env.id, { config: { image: 'b' }, expectedRevisionId: env.currentRevision.id });
      expect(first).not.toBeNull();
      const stale = await store.repos.environments.update(env.id, { config: { image: 'c' }, expectedRevisionId: env.currentRevision.id });
      expect(stale).toBeNull();
      expect((await store.repos.environments.get(env.id))?.config).toEqual({ image: 'b' });
    });

    it('concurrent edits from the same revision: exactly one wins, numbers stay unique', async () => {
      const env = await store.repos.environments.insert({ name: 'race', provider: 'fake', config: { n: 0 } });
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, n) =>
          store
            .transaction((repos) => repos.environments.update(env.id, { config: { n: n + 1 }, expectedRevisionId: env.currentRevision.id }))
            .catch(() => null),
        ),
      );
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      expect((await store.repos.environments.revisions(env.id)).map((r) => r.number)).toEqual([2, 1]);
    });

    it('a transaction that throws leaves nothing behind', async () => {
      await expect(
        store.transaction(async (repos) => {
          await repos.environments.insert({ name: 'rolled-back', provider: 'fake', config: {} });
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await store.repos.environments.getByName('rolled-back')).toBeNull();
    });

    it('deleting an environment removes its revisions', async () => {
      const env = await store.repos.environments.insert({ name: 'gone', provider: 'fake', config: {} });
      expect(await store.repos.environments.delete(env.id)).toBe(true);
      expect(await store.repos.environments.revisions(env.id)).toEqual([]);
      expect(await store.repos.environments.delete(env.id)).toBe(false);
    });

    it('finds API keys by hash until revoked', async () => {
      const key = await store.repos.apiKeys.insert({ name: 'ci', role: 'agent', keyHash: 'h1', prefix: 'sc_abcd' });
      expect((await store.repos.apiKeys.findActiveByHash('h1'))?.id).toBe(key.id);
      await store.repos.apiKeys.touch(key.id);
      expect((await store.repos.apiKeys.list())[0]?.lastUsedAt).not.toBeNull();
      const revoked = await store.repos.apiKeys.revoke(key.id);
      expect(revoked?.revokedAt).not.toBeNull();
      expect(await store.repos.apiKeys.findActiveByHash('h1')).toBeNull();
      expect(await store.repos.apiKeys.revoke('key_missing')).toBeNull();
    });

    it('lists activity newest first, filtered by action', async () => {
      for (const action of ['a.one', 'a.two', 'a.one']) {
        await store.repos.activity.insert({
          action,
          actor: { role: 'admin', keyId: null },
          subjectType: 'x',
          subjectId: null,
          details: { action },
        });
      }
      const all = await store.repos.activity.list({ limit: 10 });
      expect(all.map((a) => a.action)).toEqual(['a.one', 'a.two', 'a.one']);
      expect((await store.repos.activity.list({ limit: 10, action: 'a.two' })).length).toBe(1);
    });

    it("keeps each owner's ports in its own table, and a setup session's go with it", async () => {
      const env = await store.repos.environments.insert({ name: 'ports', provider: 'fake', config: {} });
      const session = await insertSetupSession(store, env, 60_000);
      const opened = await store.repos.setupSessionPorts.upsert({ ownerId: session.id, port: 8080, visibility: 'private' });
      expect(await store.repos.setupSessionPorts.upsert({ ownerId: session.id, port: 8080, visibility: 'public' })).toEqual({
        ...opened,
        visibility: 'public',
      });
      expect(await store.repos.sandboxPorts.get(session.id, 8080)).toBeNull();
      // The same checks as a sandbox's: a port out of range, or an owner that does not exist, is refused.
      await expect(store.repos.setupSessionPorts.upsert({ ownerId: session.id, port: 0, visibility: 'private' })).rejects.toThrow();
      await expect(store.repos.setupSessionPorts.upsert({ ownerId: 'setup_none', port: 80, visibility: 'private' })).rejects.toThrow();
      expect(await store.repos.setupSessionPorts.list(session.id)).toHaveLength(1);
      await store.repos.environments.delete(env.id);
      expect(await store.repos.setupSessionPorts.list(session.id)).toEqual([]);
    });
  });
}
