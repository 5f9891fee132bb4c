import { SandcastApiError } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`custom images under concurrent calls [${database.kind}]`, () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer({ database });
      await enableEnvironments(t.client);
    });
    afterAll(async () => {
      await t?.close();
    });

    it('parallel start / finish / rollback / disable never make two active images or two active sessions', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'contended', provider: 'fake', config: {} });
      const unexpected: unknown[] = [];
      /** Refusals (4xx) are the expected outcome of losing a race; anything else is a bug. */
      const attempt = (call: () => Promise<unknown>) =>
        call().then(
          () => 'ok',
          (error: unknown) => {
            if (error instanceof SandcastApiError && error.status >= 400 && error.status < 500) return error.code;
            unexpected.push(error);
            return 'error';
          },
        );

      for (let round = 0; round < 6; round++) {
        // Two sessions racing to start: exactly one gets the slot.
        const starts = await Promise.all([0, 1, 2].map(() => attempt(() => client.customImages.startSetup(env.id))));
        expect(starts.filter((s) => s === 'ok')).toHaveLength(1);
        const session = (await client.customImages.overview(env.id)).activeSession!;
        await client.customImages.exec(session.id, { command: ['sh', '-c', `echo ${round} > round.txt`] });

        // Finish twice, rollback, disable and another start, all at once.
        const outcomes = await Promise.all([
          attempt(() => client.customImages.finish(session.id)),
          attempt(() => client.customImages.finish(session.id)),
          attempt(() => client.customImages.rollback(env.id)),
          attempt(() => client.customImages.rollback(env.id)),
          attempt(() => client.customImages.disable(env.id)),
          attempt(() => client.customImages.startSetup(env.id)),
        ]);
        expect(outcomes.slice(0, 2).filter((o) => o === 'ok')).toHaveLength(1);

        const history = await t.server.store.repos.templates.list(env.id);
        expect(history.filter((h) => h.status === 'active').length).toBeLessThanOrEqual(1);
        const active = await t.server.store.repos.setupSessions.activeForEnvironment(env.id);
        if (active) await client.customImages.cancel(active.id).catch(() => undefined);
      }
      expect(unexpected).toEqual([]);
      const statuses = (await client.customImages.history(env.id)).map((h) => h.status);
      expect(statuses.filter((s) => s === 'active').length).toBeLessThanOrEqual(1);
      expect(statuses.length).toBe(6);
    });
  });
}
