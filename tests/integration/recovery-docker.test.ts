import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { testDatabases } from '@sandcast/db/testing';
import { createDockerProvider } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';
import { durableSession, instanceOf, refused, runRecoveryFlow } from './support/recovery-flow.ts';

const run = promisify(execFile);
const runnable = requireForSuite('recovery-docker', await dockerSkipReason());

/** Removes the container behind Sandcast's back. */
const dockerRmF = async (instanceId: string) => {
  await run('docker', ['rm', '-f', instanceId]);
};

describe.skipIf(!runnable)(`recovery after compute loss on the Docker provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server } = useRealProviderServer((dataDir) => [createDockerProvider({ dataDir })]);
  let t: TestServer;
  beforeAll(() => {
    t = server();
  });
  const provider = () => t.server.providers.get('docker')!.provider;

  it('recovers a checkpointed session whose container was removed, with every file written through Sandcast', async () => {
    await runRecoveryFlow({
      client: t.client,
      provider: provider(),
      name: 'recover-docker',
      config: { image: TEST_IMAGE },
      kill: dockerRmF,
    });
  });

  it('refuses durability none with compute_lost', async () => {
    const { session, sandboxId } = await durableSession({
      client: t.client,
      provider: provider(),
      name: 'lost-none-docker',
      config: { image: TEST_IMAGE },
      durability: 'none',
    });
    await dockerRmF(await instanceOf(provider(), sandboxId));
    const error = await refused(t.client.sessions.writeFile(session.id, '/workspace/a.txt', { content: 'a' }));
    expect([error.status, error.code]).toEqual([409, 'compute_lost']);
    await t.client.sessions.end(session.id);
  });
});

// Fencing across servers: two servers on one database and one Docker engine, one blob store.
for (const database of testDatabases().filter(() => runnable)) {
  describe.skipIf(database.skipReason !== null)(`two servers racing one recovery [${database.kind}]`, () => {
    const servers: TestServer[] = [];
    let shared: string;
    let docker: SandboxProvider;

    beforeAll(async () => {
      shared = await mkdtemp(path.join(tmpdir(), 'sandcast-fence-'));
      docker = createDockerProvider({ dataDir: shared });
      const stores = await database.openShared();
      for (const store of stores) {
        servers.push(
          await startTestServer({
            database,
            store,
            providers: [docker],
            env: { SANDCAST_CHECKPOINT_STORE: path.join(shared, 'checkpoints'), SANDCAST_RECONCILE_INTERVAL_SECONDS: '3600' },
          }),
        );
      }
      await enableEnvironments(servers[0]!.client);
    }, 120_000);
    afterAll(async () => {
      for (const s of servers) await s.close();
      if (shared) await rm(shared, { recursive: true, force: true });
    }, 120_000);

    it('bumps the generation once, creates one replacement, and every racing operation sees the files', async () => {
      const [a, b] = servers as [TestServer, TestServer];
      const { session, sandboxId } = await durableSession({
        client: a.client,
        provider: docker,
        name: `fence-${database.kind}`,
        config: { image: TEST_IMAGE },
        durability: 'checkpointed',
      });
      await a.client.sessions.writeFile(session.id, '/workspace/kept.txt', { content: 'kept\n' });
      await dockerRmF(await instanceOf(docker, sandboxId));

      const read = () => ({ command: ['cat', '/workspace/kept.txt'] });
      const answers = await Promise.all([
        a.client.sessions.exec(session.id, read()),
        b.client.sessions.exec(session.id, read()),
        a.client.sessions.exec(session.id, read()),
        b.client.sessions.exec(session.id, read()),
      ]);
      for (const answer of answers) {
        expect(answer).toMatchObject({ exitCode: 0, stdout: 'kept\n' });
        expect(answer.recovered).toMatchObject({ fromGeneration: 1, toGeneration: 2, processStateLost: true });
      }
      expect((await a.client.sessions.sandbox(session.id)).generation).toBe(2);
      expect((await docker.listInstances()).filter((i) => i.ownerId === sandboxId)).toHaveLength(1);
      const actions = (await a.client.activity({})).filter((x) => x.subjectId === sandboxId).map((x) => x.action);
      expect(actions.filter((x) => x === 'sandbox.instance_lost')).toHaveLength(1);
      expect(actions.filter((x) => x === 'sandbox.recovered')).toHaveLength(1);
      await a.client.sessions.end(session.id);
    }, 180_000);
  });
}
