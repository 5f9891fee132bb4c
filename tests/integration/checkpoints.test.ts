import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SandcastClient } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import type { createFakeProvider } from '@sandcast/provider-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';
import { instanceOf, refused } from './support/recovery-flow.ts';

/** Every blob file in the data dir's checkpoint store. */
async function blobFiles(dataDir: string): Promise<string[]> {
  const root = path.join(dataDir, 'checkpoints', 'blobs');
  const shards = await readdir(root).catch(() => [] as string[]);
  const files: string[] = [];
  for (const shard of shards) for (const name of await readdir(path.join(root, shard))) files.push(name);
  return files.sort();
}

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`checkpoints of a session's sandbox on the fake provider [${database.kind}]`, () => {
    let t: TestServer;
    let admin: SandcastClient;
    let checkpointedAgent: string;
    let plainAgent: string;

    beforeAll(async () => {
      t = await startTestServer({ database, mode: 'authenticated', env: { SANDCAST_RECONCILE_INTERVAL_SECONDS: '3600' } });
      admin = t.clientWithKey((await readFile(path.join(t.dataDir, 'admin-api-key'), 'utf8')).trim());
      await enableEnvironments(admin);
      const fixed = (revisionId: string) => ({
        mode: 'fixed' as const,
        default: 'main',
        bindings: { main: { environmentRevisionId: revisionId } },
      });
      const durable = await admin.environments.create({
        name: 'durable',
        provider: 'fake',
        config: {},
        spec: { durability: 'checkpointed' },
      });
      const plain = await admin.environments.create({ name: 'plain', provider: 'fake', config: {} });
      checkpointedAgent = (await admin.agents.create({ name: 'durable', sandboxPolicy: fixed(durable.currentRevision.id) })).id;
      plainAgent = (await admin.agents.create({ name: 'plain', sandboxPolicy: fixed(plain.currentRevision.id) })).id;
    });
    afterAll(async () => {
      await t?.close();
    });

    it('keeps the newest N checkpoints and deletes the blobs only the dropped ones referenced', async () => {
      await admin.settings.update({ sessions: { checkpointRetention: 3 } });
      const before = await blobFiles(t.dataDir);
      const session = await admin.sessions.start({ agentId: checkpointedAgent });
      // One file, new content each time: every checkpoint is one chunk and one manifest of its own.
      for (let i = 0; i < 7; i++) await admin.sessions.writeFile(session.id, '/workspace/f.txt', { content: `version ${i}\n` });
      const list = await admin.sessions.checkpoints(session.id);
      expect(list.retention).toBe(3);
      expect(list.checkpoints).toHaveLength(3);
      expect(list.checkpoints[0]).toMatchObject({ current: true, trigger: 'auto', fileCount: 1, totalBytes: 10, changedPaths: 1 });
      expect(list.checkpoints.every((c) => c.storedBytes > 0)).toBe(true);
      const added = (await blobFiles(t.dataDir)).filter((f) => !before.includes(f));
      expect(added).toHaveLength(3 * 2);

      // A manual one over an unchanged workspace stores nothing new (the same chunk, the same manifest).
      const manual = await admin.sessions.checkpoint(session.id);
      expect(manual.checkpoint).toMatchObject({ trigger: 'manual', current: true, changedPaths: 0, storedBytes: 0 });
      expect((await admin.sessions.checkpoints(session.id)).checkpoints.map((c) => c.id)[0]).toBe(manual.checkpoint.id);
      expect((await blobFiles(t.dataDir)).filter((f) => !before.includes(f))).toHaveLength(3 * 2 - 2);

      // Ending the session deletes the sandbox; the reconciler's sweep drops its checkpoints and blobs.
      await admin.sessions.end(session.id);
      await t.server.reconciler.runOnce();
      expect((await blobFiles(t.dataDir)).filter((f) => !before.includes(f))).toEqual([]);
      await admin.settings.update({ sessions: { checkpointRetention: 20 } });
    });

    it('recovers a vanished fake instance from its last checkpoint', async () => {
      const session = await admin.sessions.start({ agentId: checkpointedAgent });
      await admin.sessions.writeFile(session.id, '/workspace/a.txt', { content: 'a\n' });
      const fake = t.server.providers.get('fake')!.provider as ReturnType<typeof createFakeProvider>;
      await fake.vanish(await instanceOf(fake, session.primarySandboxId!));
      const read = await admin.sessions.readFile(session.id, '/workspace/a.txt');
      expect(read).toMatchObject({ content: 'a\n', recovered: { fromGeneration: 1, toGeneration: 2, processStateLost: true } });
      await admin.sessions.end(session.id);
    });

    it('refuses bad input on every checkpoint route with a clear 4xx', async () => {
      const session = await admin.sessions.start({ agentId: checkpointedAgent });
      await admin.sessions.writeFile(session.id, '/workspace/a.txt', { content: 'a\n' });
      const [mine] = (await admin.sessions.checkpoints(session.id)).checkpoints;
      const other = await admin.sessions.start({ agentId: checkpointedAgent });
      await admin.sessions.writeFile(other.id, '/workspace/b.txt', { content: 'b\n' });
      const [theirs] = (await admin.sessions.checkpoints(other.id)).checkpoints;
      const key = (await readFile(path.join(t.dataDir, 'admin-api-key'), 'utf8')).trim();
      const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
        t.fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        });
      const base = `/api/sessions/${session.id}/sandbox/checkpoints`;
      const cases: Array<[string, unknown, number, string]> = [
        [base, { trigger: 'auto' }, 400, 'validation_failed'],
        [base, [], 400, 'validation_failed'],
        [base, 'null', 400, 'validation_failed'],
        [`${base}/${theirs!.id}/restore`, {}, 404, 'not_found'],
        [`${base}/ckp_${'0'.repeat(32)}/restore`, {}, 404, 'not_found'],
        [`${base}/${encodeURIComponent('../../../etc')}/restore`, {}, 400, 'validation_failed'],
        // A NUL anywhere in a path is refused before routing.
        [`${base}/ckp_%00${'0'.repeat(30)}/restore`, {}, 400, 'bad_request'],
        // So is a path segment past the router's length limit.
        [`${base}/${'x'.repeat(5000)}/restore`, {}, 400, 'bad_request'],
        [`${base}/${mine!.id}/restore`, { to: 1 }, 400, 'validation_failed'],
        [`/api/sessions/ses_nope/sandbox/checkpoints`, {}, 404, 'not_found'],
        [`/api/sessions/${'\u00e9'.repeat(200)}/sandbox/checkpoints/${mine!.id}/restore`, {}, 400, 'bad_request'],
      ];
      for (const [url, body, status, code] of cases) {
        const answer = await post(url, body);
        expect([url.slice(0, 80), answer.status, (answer.body as { error?: { code: string } })?.error?.code]).toEqual([
          url.slice(0, 80),
          status,
          code,
        ]);
      }
      expect((await post(`${base}/${mine!.id}/restore`, {}, { accept: 'text/html' })).status).toBe(406);

      // An agent key reaches only its own sessions' checkpoints.
      const agentKey = await admin.keys.create({ name: 'ckpt agent', role: 'agent' });
      await admin.keys.setAllowedAgents(agentKey.key.id, [checkpointedAgent]);
      const agent = t.clientWithKey(agentKey.secret);
      expect((await refused(agent.sessions.checkpoints(session.id))).status).toBe(404);
      expect((await refused(agent.sessions.checkpoint(session.id))).status).toBe(404);
      expect((await refused(agent.sessions.restore(session.id, mine!.id))).status).toBe(404);
      const own = await agent.sessions.start({ agentId: checkpointedAgent });
      await agent.sessions.writeFile(own.id, '/workspace/own.txt', { content: 'own\n' });
      const [ownCheckpoint] = (await agent.sessions.checkpoints(own.id)).checkpoints;
      expect((await agent.sessions.restore(own.id, ownCheckpoint!.id)).checkpoint.id).toBe(ownCheckpoint!.id);
      expect((await refused(agent.sessions.restore(own.id, mine!.id))).status).toBe(404);

      // Durability none keeps none and refuses a manual one, saying what to use instead.
      const plain = await admin.sessions.start({ agentId: plainAgent });
      await admin.sessions.writeFile(plain.id, '/workspace/p.txt', { content: 'p\n' });
      expect((await admin.sessions.checkpoints(plain.id)).checkpoints).toEqual([]);
      const none = await refused(admin.sessions.checkpoint(plain.id));
      expect([none.status, none.code]).toEqual([409, 'conflict']);
      expect(none.message).toMatch(/durability checkpointed/);

      for (const s of [session, other, plain]) await admin.sessions.end(s.id);
      await agent.sessions.end(own.id);
    });
  });
}
