import { testDatabases } from '@sandcast/db/testing';
import { type FakeKubernetes, fakeClusterSkipReason, startFakeKubernetes, TEST_IMAGE } from '@sandcast/provider-kubernetes/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, recordingCall, startTestServer, type TestServer } from './support/harness.ts';
import { requireForSuite } from './support/lifecycle.ts';

const runs = requireForSuite('connections-kubernetes (sandboxes on the fake API server)', await fakeClusterSkipReason());

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null || !runs)(`a Kubernetes connection through the server [${database.kind}]`, () => {
    let fake: FakeKubernetes;
    let t: TestServer;
    let token: string;
    const answers: string[] = [];
    const call = recordingCall(() => t, answers);

    beforeAll(async () => {
      fake = await startFakeKubernetes();
      token = /token: (\S+)/.exec(fake.kubeconfig)?.[1] ?? '';
      t = await startTestServer({ database });
      await enableEnvironments(t.client);
    });
    afterAll(async () => {
      await t?.close();
      const unhandled = [...(fake?.unhandled ?? [])];
      await fake?.close();
      expect(unhandled).toEqual([]);
    });

    it('refuses a kubeconfig that would make the server read its files', async () => {
      const kubeconfig = fake.kubeconfig.replace(/token: \S+/, 'token-file: /etc/shadow');
      const refused = await call('POST', '/api/connections', {
        name: 'k8s-files',
        provider: 'kubernetes',
        config: { namespace: fake.namespace },
        secrets: { kubeconfig },
      });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('token-file');
    });

    it('stores the kubeconfig write-only, and runs sandboxes and a capture through the connection', async () => {
      const created = await call('POST', '/api/connections', {
        name: 'k8s',
        provider: 'kubernetes',
        config: { namespace: fake.namespace, captureRegistry: 'registry.sandcast.test/it', committerImage: 'sandcast/committer:test' },
        secrets: { kubeconfig: fake.kubeconfig },
      });
      expect(created.status).toBe(201);
      expect(created.body.secrets).toEqual({ kubeconfig: { secret: true, set: true } });
      const id = created.body.id as string;
      expect((await call('POST', `/api/connections/${id}/test`)).body).toEqual({ ok: true });

      const env = await call('POST', '/api/environments', {
        name: 'k8s-env',
        provider: 'kubernetes',
        config: { image: TEST_IMAGE, cpu: 0.5, memoryMb: 256 },
        connectionId: id,
      });
      expect(env.status).toBe(201);

      const { session } = await t.client.customImages.startSetup(env.body.id);
      const ran = await t.client.customImages.exec(session.id, { command: ['sh', '-c', 'mkdir -p /opt && echo tooled > /opt/tool.txt'] });
      expect(ran.exitCode).toBe(0);
      const { template } = await t.client.customImages.finish(session.id);
      expect(template.kind).toBe('image');

      const sandbox = await t.client.sandboxes.create({ environmentId: env.body.id });
      expect(sandbox.imageId).toBe(template.id);
      const read = await t.client.sandboxes.exec(sandbox.id, { command: ['cat', '/opt/tool.txt'] });
      expect(read.stdout).toBe('tooled\n');
      await t.client.sandboxes.delete(sandbox.id);
      expect(fake.cluster.list('Pod', fake.namespace, {})).toEqual([]);
    });

    it('never lets the kubeconfig or its token out: answers and the server log', async () => {
      await call('GET', '/api/connections');
      for (const text of answers) expect(text).not.toContain(token);
      for (const line of t.logs) expect(line).not.toContain(token);
    });
  });
}
