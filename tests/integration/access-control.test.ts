import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { testDatabases } from '@sandcast/db/testing';
import { loadConfig } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

/** A concrete URL for a route pattern: params filled with ids that do not exist. */
const concrete = (url: string) => url.replace(/:([A-Za-z]+)/g, 'does_not_exist');

describe('access control: authenticated mode', () => {
  let t: TestServer;
  let admin: string;
  let agent: string;

  beforeAll(async () => {
    t = await startTestServer({ database: pglite, mode: 'authenticated' });
    admin = (await readFile(path.join(t.dataDir, 'admin-api-key'), 'utf8')).trim();
    agent = (await t.clientWithKey(admin).keys.create({ name: 'an agent', role: 'agent' })).secret;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('bootstraps an admin key into a 0600 file when no key exists', async () => {
    expect(admin).toMatch(/^sc_[A-Za-z0-9_-]{43}$/);
    expect((await stat(path.join(t.dataDir, 'admin-api-key'))).mode & 0o777).toBe(0o600);
    const keys = await t.clientWithKey(admin).keys.list();
    expect(JSON.stringify(keys)).not.toContain(admin);
  });

  it('every route declares its access', () => {
    expect(t.server.routes.length).toBeGreaterThan(10);
    for (const route of t.server.routes) expect(['public', 'admin', 'agent'], `${route.method} ${route.url}`).toContain(route.access);
  });

  it('a route registered without an access declaration is refused at registration', async () => {
    await expect(
      startTestServer({
        database: pglite,
        beforeListen: (app) => {
          app.get('/api/undeclared', async () => ({ leaked: true }));
        },
      }),
    ).rejects.toThrow(/declares no access/);
  });

  it('every non-public route answers 401 without a key, with a malformed header, and with a bad key', async () => {
    for (const route of t.server.routes.filter((r) => r.access !== 'public' && r.method !== 'HEAD')) {
      const url = concrete(route.url);
      for (const authorization of [undefined, 'Basic abc', 'Bearer sc_notarealkeynotarealkeynotarealkeynotareal']) {
        const res = await t.fetch(url, { method: route.method, headers: authorization ? { authorization } : {} });
        expect(res.status, `${route.method} ${url} with ${authorization}`).toBe(401);
        expect(res.body).toMatchObject({ error: { code: 'unauthorized' } });
      }
    }
  });

  it('an agent key gets 403 on every admin route, before any state is read', async () => {
    const adminRoutes = t.server.routes.filter((r) => r.access === 'admin' && r.method !== 'HEAD');
    expect(adminRoutes.map((r) => r.url)).toEqual(expect.arrayContaining(['/api/instance/settings', '/api/environments', '/api/keys']));
    const before = (await t.clientWithKey(admin).activity({ limit: 500 })).length;
    for (const route of adminRoutes) {
      const res = await t.fetch(concrete(route.url), {
        method: route.method,
        headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
        body: ['POST', 'PATCH'].includes(route.method) ? JSON.stringify({ name: 'x', provider: 'fake', role: 'admin' }) : undefined,
      });
      expect(res.status, `${route.method} ${route.url}`).toBe(403);
      expect(res.body).toMatchObject({ error: { code: 'forbidden' } });
    }
    // Refused before the feature gate and the handlers: nothing changed.
    expect((await t.clientWithKey(admin).activity({ limit: 500 })).length).toBe(before);
  });

  it('an admin key works; a revoked key is refused from then on', async () => {
    const client = t.clientWithKey(admin);
    await enableEnvironments(client);
    expect(await client.environments.list()).toEqual([]);
    const { key, secret } = await client.keys.create({ name: 'short-lived', role: 'admin' });
    expect((await t.clientWithKey(secret).settings.get()).experimental.enableEnvironments).toBe(true);
    await client.keys.revoke(key.id);
    const res = await t.fetch('/api/instance/settings', { headers: { authorization: `Bearer ${secret}` } });
    expect(res.status).toBe(401);
  });

  it("an agent key stops and starts only its own sandboxes and sessions; another key's session is 404", async () => {
    const client = t.clientWithKey(admin);
    await enableEnvironments(client);
    const env = await client.environments.create({ name: 'agent-lifecycle', provider: 'fake', config: {} });
    const sandbox = await client.sandboxes.create({ environmentId: env.id });
    const post = (url: string, key: string) =>
      t.fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' });
    const refused = await post(`/api/sandboxes/${sandbox.id}/stop`, agent);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'forbidden' } });

    // Sessions come from the sessions module; here one is written as it would write it.
    const repos = t.server.store.repos;
    const agentKeyId = (await client.keys.list()).find((k) => k.name === 'an agent')!.id;
    const owner = await repos.agents.insert({
      name: 'lifecycle-agent',
      displayName: null,
      description: null,
      sandboxPolicy: { mode: 'none', default: null, bindings: {} },
      capabilities: [],
    });
    const session = async (keyId: string) => {
      const created = await repos.sessions.insert({
        agentId: owner.id,
        agentVersionId: owner.currentVersion.id,
        bindingName: null,
        createdByRole: 'agent',
        createdByKeyId: keyId,
      });
      await repos.sessions.setPrimarySandbox(created.id, sandbox.id);
      return created;
    };
    const others = await session('key_someone_else');
    const missing = await post(`/api/sessions/${others.id}/sandbox/stop`, agent);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'not_found' } });
    expect((await client.sandboxes.get(sandbox.id)).status).toBe('running');

    const own = await session(agentKeyId);
    const stopped = await post(`/api/sessions/${own.id}/sandbox/stop`, agent);
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ id: sandbox.id, desiredStatus: 'stopped', status: 'stopped' });
    const started = await post(`/api/sessions/${own.id}/sandbox/start`, agent);
    expect(started.body).toMatchObject({ id: sandbox.id, status: 'running' });
    // The admin reaches any sandbox directly.
    expect((await client.sandboxes.stop(sandbox.id)).status).toBe('stopped');
  });

  it('health stays public', async () => {
    const res = await t.fetch('/api/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ deploymentMode: 'authenticated' });
  });

  it('keys never reach the logs', async () => {
    expect(t.logs.join('\n')).not.toContain(admin);
    expect(t.logs.join('\n')).not.toContain(agent);
  });
});

describe('access control: local_trusted mode', () => {
  it('refuses to start on a non-loopback host and names the other mode', () => {
    expect(() => loadConfig({ SANDCAST_HOST: '0.0.0.0' })).toThrow(/SANDCAST_DEPLOYMENT_MODE=authenticated/);
    expect(() => loadConfig({ SANDCAST_HOST: '::1' })).not.toThrow();
    expect(() => loadConfig({ SANDCAST_HOST: '0.0.0.0', SANDCAST_DEPLOYMENT_MODE: 'authenticated' })).not.toThrow();
  });

  it('treats a loopback caller without a key as the operator, but still limits an agent key', async () => {
    const t = await startTestServer({ database: pglite });
    try {
      expect((await t.client.settings.get()).experimental).toBeDefined();
      const { secret } = await t.client.keys.create({ name: 'agent', role: 'agent' });
      const res = await t.fetch('/api/instance/settings', { headers: { authorization: `Bearer ${secret}` } });
      expect(res.status).toBe(403);
    } finally {
      await t.close();
    }
  });
});
