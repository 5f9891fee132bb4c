import { testDatabases } from '@sandcast/db/testing';
import { type FakeDaytona, fakeDaytonaSkipReason, startFakeDaytona } from '@sandcast/provider-daytona/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, recordingCall, startTestServer, type TestServer } from './support/harness.ts';
import { requireForSuite } from './support/lifecycle.ts';
import { attachTerminal } from './support/terminal-client.ts';

const sandboxesRun = requireForSuite('connections-daytona (sandboxes on the Daytona fake)', await fakeDaytonaSkipReason());

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`provider connections and the Daytona provider [${database.kind}]`, () => {
    // The credential the fake accepts: it must never come back out of Sandcast.
    const planted = `planted-daytona-key-${Math.random().toString(36).slice(2)}-${database.kind}`;
    let fake: FakeDaytona;
    let t: TestServer;
    /** Every answer body the test saw, to search for the planted secret at the end. */
    const answers: string[] = [];
    const call = recordingCall(() => t, answers);

    beforeAll(async () => {
      fake = await startFakeDaytona({ apiKey: planted });
      t = await startTestServer({ database });
      await enableEnvironments(t.client);
    });
    afterAll(async () => {
      await t?.close();
      await fake?.close();
    });

    it('reports Daytona unavailable with "no connection" until a connection exists', async () => {
      const { body } = await call('GET', '/api/sandbox-targets');
      const daytona = body.targets.find((target: { provider: string }) => target.provider === 'daytona');
      expect(daytona).toMatchObject({ available: false, unavailableReason: expect.stringMatching(/^no connection/) });
      expect(daytona.connection.secretsSchema.properties.apiKey).toMatchObject({ secret: true });
      // The local providers need none.
      expect(body.targets.find((target: { provider: string }) => target.provider === 'fake').connection).toBeUndefined();
    });

    it('stores a connection write-only, tests it, and routes an environment through it', async () => {
      const created = await call('POST', '/api/connections', {
        name: 'daytona-main',
        provider: 'daytona',
        config: { apiUrl: fake.apiUrl },
        secrets: { apiKey: planted },
      });
      expect(created.status).toBe(201);
      expect(created.body.secrets).toEqual({ apiKey: { secret: true, set: true } });
      const id = created.body.id as string;
      expect((await call('GET', `/api/connections/${id}`)).body.config).toEqual({ apiUrl: fake.apiUrl });
      expect((await call('GET', '/api/connections')).body.connections).toHaveLength(1);
      expect((await call('POST', `/api/connections/${id}/test`)).body).toEqual({ ok: true });

      // A wrong key: the test says why, in words to act on.
      await call('PATCH', `/api/connections/${id}`, { secrets: { apiKey: 'not-the-key' } });
      const failing = await call('POST', `/api/connections/${id}/test`);
      expect(failing.body).toMatchObject({ ok: false, reason: expect.stringContaining('refused the API key (401)') });
      await call('PATCH', `/api/connections/${id}`, { secrets: { apiKey: planted } });
      // A placeholder sent back keeps the stored value.
      await call('PATCH', `/api/connections/${id}`, { name: 'daytona-prod', secrets: { apiKey: { secret: true, set: true } } });
      expect((await call('POST', `/api/connections/${id}/test`)).body).toEqual({ ok: true });

      const target = (await call('GET', '/api/sandbox-targets')).body.targets.find((x: { provider: string }) => x.provider === 'daytona');
      expect(target.available).toBe(true);

      const missing = await call('POST', '/api/environments', { name: 'dt-none', provider: 'daytona', config: {} });
      expect(missing.status).toBe(422);
      expect(missing.body.error).toMatchObject({ code: 'unprocessable', details: { field: 'connectionId' } });
      const unknown = await call('POST', '/api/environments', { name: 'dt-x', provider: 'daytona', config: {}, connectionId: 'conn_nope' });
      expect(unknown.status).toBe(422);
      const onLocal = await call('POST', '/api/environments', { name: 'fake-x', provider: 'fake', config: {}, connectionId: id });
      expect(onLocal.status).toBe(422);
      expect(onLocal.body.error.message).toContain('takes no connection');

      const env = await call('POST', '/api/environments', { name: 'dt-env', provider: 'daytona', config: {}, connectionId: id });
      expect(env.status).toBe(201);
      expect(env.body.connectionId).toBe(id);

      const inUse = await call('DELETE', `/api/connections/${id}`);
      expect(inUse.status).toBe(409);
      expect(inUse.body.error).toMatchObject({ code: 'conflict', details: { environments: ['dt-env'] } });
      expect(inUse.body.error.message).toContain('dt-env');
    });

    it.skipIf(!sandboxesRun)('runs the custom-image flow on Daytona: setup over SSH access, snapshot, boot from it', async () => {
      const env = await t.client.environments.resolve('dt-env');
      const { session, connectionPayload } = await t.client.customImages.startSetup(env.id);
      expect(connectionPayload).toMatchObject({ type: 'ssh', host: '127.0.0.1' });
      const ran = await t.client.customImages.exec(session.id, {
        command: ['sh', '-c', 'echo tooled > /opt/tool.txt && echo ws > ws.txt'],
      });
      expect(ran.exitCode).toBe(0);
      const { template } = await t.client.customImages.finish(session.id);
      expect(template).toMatchObject({ kind: 'snapshot', providerRef: expect.stringMatching(/^conn_[0-9a-f]+~sandcast-/) });

      const sandbox = await t.client.sandboxes.create({ environmentId: env.id });
      expect(sandbox.imageId).toBe(template.id);
      const read = await t.client.sandboxes.exec(sandbox.id, { command: ['sh', '-c', 'cat /opt/tool.txt ws.txt'] });
      expect(read.stdout).toBe('tooled\nws\n');
      await t.client.sandboxes.delete(sandbox.id);
      expect([...fake.sandboxes.values()].filter((s) => s.state !== 'destroyed')).toEqual([]);
    });

    it.skipIf(!sandboxesRun)('the browser terminal reaches a Daytona setup sandbox over its SSH access, the host key pinned', async () => {
      const env = await t.client.environments.resolve('dt-env');
      const { session, connectionPayload } = await t.client.customImages.startSetup(env.id);
      expect(session.connectionSummary).toMatchObject({ type: 'ssh', host: '127.0.0.1' });
      const token = await t.client.customImages.terminalSessionToken(session.id);
      expect(token.connectionType).toBe('ssh');
      const terminal = await attachTerminal(t.url, token);
      terminal.type('echo "in=$(cat /etc/debian_version | cut -c1-2)x"\r');
      await terminal.waitFor(/in=\d+x/);
      const port = (connectionPayload as { port: number }).port;
      const probe = { setupSessionId: session.id, host: '127.0.0.1', port, fingerprint: 'SHA256:another' };
      expect(await t.server.store.repos.terminalSessions.pinHostKey(probe)).toMatchObject({ ok: false });
      terminal.type('exit\r');
      expect(await terminal.connection.closed).toMatchObject({ reason: 'ssh_closed' });
      await t.client.customImages.cancel(session.id);
    });

    it.skipIf(!sandboxesRun)('a probe archives its Daytona sandbox instead of deleting it', async () => {
      const env = await t.client.environments.resolve('dt-env');
      const probe = await call('POST', `/api/environments/${env.id}/probe`);
      expect(probe.body).toMatchObject({ ok: true });
      const archived = [...fake.sandboxes.values()].filter((s) => s.state === 'archived');
      expect(archived).toHaveLength(1);
    });

    it('never lets the planted secret out: answers, activity and the server log', async () => {
      await call('GET', '/api/activity?limit=500');
      const activity = (await call('GET', '/api/activity?limit=500')).body.activity as Array<{ action: string }>;
      expect(activity.map((a) => a.action)).toEqual(expect.arrayContaining(['connection.created', 'connection.updated']));
      for (const text of answers) expect(text).not.toContain(planted);
      expect(t.logs.length).toBeGreaterThan(0);
      for (const line of t.logs) expect(line).not.toContain(planted);
      expect(fake.unhandled).toEqual([]);
    });
  });
}
