import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from './connect.ts';
import { createRepositories, type Repositories } from './store.ts';
import { testDatabases } from './testing/test-databases.ts';

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`bridge upstreams [${database.kind}]`, () => {
    let raw: Database;
    let repos: Repositories;

    beforeAll(async () => {
      raw = await database.openDatabase();
      repos = createRepositories(raw.db);
    });
    afterAll(async () => {
      await raw?.close();
    });

    it('creates, replaces keeping the credential, lists and deletes', async () => {
      const sealed = { $encrypted: 'v1.a.b.c' };
      const created = await repos.bridgeUpstreams.put({
        name: 'gh',
        baseUrl: 'https://api.example.test',
        allowedPaths: ['/repos/*'],
        credential: sealed,
      });
      expect(created).toMatchObject({ name: 'gh', allowedPaths: ['/repos/*'], credential: sealed });
      const replaced = await repos.bridgeUpstreams.put({ name: 'gh', baseUrl: 'https://api2.example.test', allowedPaths: ['/user'] });
      expect(replaced).toMatchObject({ baseUrl: 'https://api2.example.test', allowedPaths: ['/user'], credential: sealed });
      const resealed = { $encrypted: 'v1.d.e.f' };
      await repos.bridgeUpstreams.put({ name: 'gh', baseUrl: 'https://api2.example.test', allowedPaths: ['/user'], credential: resealed });
      expect((await repos.bridgeUpstreams.get('gh'))?.credential).toEqual(resealed);
      expect(await repos.bridgeUpstreams.put({ name: 'absent', baseUrl: 'https://x.test', allowedPaths: [] })).toBeNull();
      await repos.bridgeUpstreams.put({ name: 'aa', baseUrl: 'https://a.test', allowedPaths: [], credential: sealed });
      expect((await repos.bridgeUpstreams.list()).map((u) => u.name)).toEqual(['aa', 'gh']);
      expect(await repos.bridgeUpstreams.delete('gh')).toBe(true);
      expect(await repos.bridgeUpstreams.delete('gh')).toBe(false);
      expect(await repos.bridgeUpstreams.get('gh')).toBeNull();
    });
  });
}
