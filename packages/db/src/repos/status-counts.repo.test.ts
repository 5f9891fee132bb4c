import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../store.ts';
import { insertSetupSession } from '../testing/fixtures.ts';
import { testDatabases } from '../testing/test-databases.ts';

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`status counts [${database.kind}]`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await database.open();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('counts sandboxes and setup sessions per status, and nothing for an empty table', async () => {
      expect(await store.repos.statusCounts.sandboxes()).toEqual(new Map());
      const env = await store.repos.environments.insert({ name: 'counted', provider: 'fake', config: {} });
      const sandbox = () =>
        store.repos.sandboxes.insert({
          environmentId: env.id,
          environmentRevisionId: env.currentRevision.id,
          imageId: null,
          provider: 'fake',
          createdByRole: 'admin',
          createdByKeyId: null,
        });
      const [a, b] = [await sandbox(), await sandbox(), await sandbox()];
      await store.repos.sandboxes.update(a!.id, { status: 'running' });
      await store.repos.sandboxes.update(b!.id, { status: 'running' });
      expect(await store.repos.statusCounts.sandboxes()).toEqual(
        new Map([
          ['running', 2],
          ['starting', 1],
        ]),
      );
      await insertSetupSession(store, env, 60_000);
      expect(await store.repos.statusCounts.setupSessions()).toEqual(new Map([['starting', 1]]));
    });
  });
}
