import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepositories, type Repositories } from './store.ts';
import { testDatabases } from './testing/test-databases.ts';

/** The one-statement read and touch of an operation on running compute (ADR 0032). */
for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`sandboxes.touchRunning [${database.kind}]`, () => {
    let repos: Repositories;
    let close: () => Promise<void>;
    let environmentId = '';
    let revisionId = '';
    beforeAll(async () => {
      const raw = await database.openDatabase();
      close = () => raw.close();
      repos = createRepositories(raw.db);
      const env = await repos.environments.insert({ name: 'touch', provider: 'fake', config: {} });
      environmentId = env.id;
      revisionId = env.currentRevision.id;
    });
    afterAll(async () => {
      await close?.();
    });

    const sandbox = async (options: { keyId?: string; pooled?: boolean; running?: boolean } = {}) => {
      const row = await repos.sandboxes.insert({
        environmentId,
        environmentRevisionId: revisionId,
        imageId: null,
        provider: 'fake',
        createdByRole: options.keyId ? 'agent' : 'admin',
        createdByKeyId: options.keyId ?? null,
        pooled: options.pooled ?? false,
      });
      if (options.running !== false) await repos.sandboxes.update(row.id, { providerInstanceId: `i-${row.id}`, status: 'running' });
      return row.id;
    };
    const lastActivity = async (id: string) => (await repos.sandboxes.get(id))!.lastActivityAt;
    const at = new Date(Date.UTC(2031, 0, 1));

    it('touches and returns a running sandbox, for an admin or the key that created it', async () => {
      const mine = await sandbox({ keyId: 'key-a' });
      expect((await repos.sandboxes.touchRunning(mine, at))?.id).toBe(mine);
      expect(await lastActivity(mine)).toBe(at.toISOString());
      const later = new Date(at.getTime() + 1000);
      expect((await repos.sandboxes.touchRunning(mine, later, 'key-a'))?.lastActivityAt).toBe(later.toISOString());
    });

    it('touches nothing and returns null for another key, a pool member, a sandbox not running, or no such id', async () => {
      const other = await sandbox({ keyId: 'key-a' });
      const member = await sandbox({ pooled: true });
      const starting = await sandbox({ running: false });
      const stopped = await sandbox();
      await repos.sandboxes.update(stopped, { status: 'stopped' });
      const before = await Promise.all([other, member, starting, stopped].map(lastActivity));
      expect(await repos.sandboxes.touchRunning(other, at, 'key-b')).toBeNull();
      expect(await repos.sandboxes.touchRunning(member, at)).toBeNull();
      expect(await repos.sandboxes.touchRunning(starting, at)).toBeNull();
      expect(await repos.sandboxes.touchRunning(stopped, at)).toBeNull();
      expect(await repos.sandboxes.touchRunning('sbx_nope', at)).toBeNull();
      expect(await Promise.all([other, member, starting, stopped].map(lastActivity))).toEqual(before);
    });
  });
}
