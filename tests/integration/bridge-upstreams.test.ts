import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandcast } from './support/cli.ts';
import { startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;
const SECRET = 'ghp_upstream-credential-never-shown';

describe('bridge upstreams', () => {
  let t: TestServer;
  let admin: string;
  let agent: string;
  const put = (name: string, body: unknown, key = admin) =>
    t.fetch(`/api/bridge/upstreams/${name}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    t = await startTestServer({ database: pglite, mode: 'authenticated' });
    admin = (await readFile(path.join(t.dataDir, 'admin-api-key'), 'utf8')).trim();
    agent = (await t.clientWithKey(admin).keys.create({ name: 'an agent', role: 'agent' })).secret;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stores the credential sealed, never answers it, and hands it to the bridge decrypted', async () => {
    const client = t.clientWithKey(admin);
    const created = await client.bridgeUpstreams.put('gh', {
      baseUrl: 'https://api.example.test/v3',
      allowedPaths: ['/repos/*', '/user'],
      credential: SECRET,
    });
    expect(created).toMatchObject({ name: 'gh', baseUrl: 'https://api.example.test/v3', hasCredential: true });
    expect(JSON.stringify(await client.bridgeUpstreams.list())).not.toContain(SECRET);

    const stored = await t.server.store.repos.bridgeUpstreams.get('gh');
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    expect(await t.server.services.bridgeUpstreams.resolved()).toEqual([
      { name: 'gh', baseUrl: 'https://api.example.test/v3', allowedPaths: ['/repos/*', '/user'], credential: SECRET },
    ]);

    // A replace without a credential keeps the stored one.
    await client.bridgeUpstreams.put('gh', { baseUrl: 'https://api.example.test/v4', allowedPaths: ['/user'] });
    expect(await t.server.services.bridgeUpstreams.resolved()).toMatchObject([
      { baseUrl: 'https://api.example.test/v4', credential: SECRET },
    ]);

    // A new upstream needs one.
    const missing = await put('fresh', { baseUrl: 'https://x.test', allowedPaths: ['/a'] });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('credential');

    const activity = await client.activity({ limit: 20 });
    expect(activity.map((a) => a.action)).toEqual(expect.arrayContaining(['bridge_upstream.created', 'bridge_upstream.updated']));
    expect(JSON.stringify(activity)).not.toContain(SECRET);
    expect(t.logs.join('\n')).not.toContain(SECRET);

    expect(await client.bridgeUpstreams.delete('gh')).toMatchObject({ name: 'gh' });
    expect(await client.bridgeUpstreams.list()).toEqual([]);
    const again = await t.fetch('/api/bridge/upstreams/gh', { method: 'DELETE', headers: { authorization: `Bearer ${admin}` } });
    expect(again.status).toBe(404);
  });

  it('is admin only', async () => {
    const headers = { authorization: `Bearer ${agent}` };
    expect((await t.fetch('/api/bridge/upstreams', { headers })).status).toBe(403);
    expect((await put('gh', { baseUrl: 'https://x.test', allowedPaths: ['/a'], credential: 'c' }, agent)).status).toBe(403);
    expect((await t.fetch('/api/bridge/upstreams/gh', { method: 'DELETE', headers })).status).toBe(403);
    expect((await t.fetch('/api/bridge/upstreams')).status).toBe(401);
  });

  const good = { baseUrl: 'https://api.example.test', allowedPaths: ['/repos/*'], credential: 'c' };
  it.each([
    ['a baseUrl of the wrong type', 'gh', { ...good, baseUrl: 42 }],
    ['allowedPaths of the wrong type', 'gh', { ...good, allowedPaths: '/repos/*' }],
    ['a file: baseUrl', 'gh', { ...good, baseUrl: 'file:///etc/passwd' }],
    ['a baseUrl with userinfo', 'gh', { ...good, baseUrl: 'https://user:pw@api.example.test' }],
    ['a baseUrl with a query', 'gh', { ...good, baseUrl: 'https://api.example.test/?token=x' }],
    ['a baseUrl with a fragment', 'gh', { ...good, baseUrl: 'https://api.example.test/#x' }],
    ['a baseUrl with NUL', 'gh', { ...good, baseUrl: 'https://api.example.test/\u0000' }],
    ['a huge baseUrl', 'gh', { ...good, baseUrl: `https://api.example.test/${'a'.repeat(5000)}` }],
    ['a path with ..', 'gh', { ...good, allowedPaths: ['/repos/../admin/*'] }],
    ['a path with NUL', 'gh', { ...good, allowedPaths: ['/repos/\u0000'] }],
    ['a path not starting with /', 'gh', { ...good, allowedPaths: ['repos/*'] }],
    ['a path with a query', 'gh', { ...good, allowedPaths: ['/repos?x=1'] }],
    ['a path with a wildcard in the middle', 'gh', { ...good, allowedPaths: ['/re*/x'] }],
    ['too many paths', 'gh', { ...good, allowedPaths: Array.from({ length: 65 }, (_, i) => `/p${i}`) }],
    ['no paths', 'gh', { ...good, allowedPaths: [] }],
    ['a credential with NUL', 'gh', { ...good, credential: 'a\u0000b' }],
    ['a huge credential', 'gh', { ...good, credential: 'x'.repeat(10_000) }],
    ['a credential of the wrong type', 'gh', { ...good, credential: 7 }],
    ['an unknown field', 'gh', { ...good, headers: {} }],
    ['a name starting with ..', '..gh', good],
    ['a name with dots', 'a..b', good],
    ['an upper-case name', 'GitHub', good],
    ['an encoded NUL in the name', 'gh%00', good],
    ['a huge name', 'a'.repeat(100), good],
  ])('refuses %s with 400', async (_what, name, body) => {
    const answer = await put(name, body);
    expect(answer.status, answer.text).toBe(400);
    // NUL anywhere in a body is refused before validation (`bad_request`); the rest by the schema.
    expect(['validation_failed', 'bad_request']).toContain((answer.body as { error: { code: string } }).error.code);
  });

  it('a bare .. as the name never reaches the route', async () => {
    // The URL is normalised first: `/api/bridge/upstreams/..` is `/api/bridge/`, which no route serves.
    expect((await put('..', good)).status).toBe(404);
    expect((await t.clientWithKey(admin).bridgeUpstreams.list()).map((u) => u.name)).not.toContain('..');
  });

  it('refuses a body that is not JSON', async () => {
    expect((await put('gh', '{not json')).status).toBe(400);
  });

  it('sandcast bridge upstream set, list and rm; the credential is never printed', async () => {
    const env = { SANDCAST_URL: t.url, SANDCAST_API_KEY: admin, UPSTREAM_TOKEN: SECRET };
    const set = await sandcast(
      [
        'bridge',
        'upstream',
        'set',
        'docs',
        '--base-url',
        'https://docs.example.test',
        '--path',
        '/search',
        '--credential-env',
        'UPSTREAM_TOKEN',
      ],
      env,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('created upstream docs');
    const replaced = await sandcast(['bridge', 'upstream', 'set', 'docs', '--path', '/search', '--path', '/pages/*'], env);
    expect(replaced.code, replaced.stderr).toBe(0);
    const list = await sandcast(['bridge', 'upstream', 'list'], env);
    expect(list.stdout).toMatch(/^docs\s+https:\/\/docs\.example\.test\s+\/search \/pages\/\*/m);
    const fresh = await sandcast(['bridge', 'upstream', 'set', 'new', '--base-url', 'https://x.test'], env);
    expect(fresh.code).not.toBe(0);
    expect(fresh.stderr).toContain('--credential-env');
    const removed = await sandcast(['bridge', 'upstream', 'rm', 'docs'], env);
    expect(removed).toMatchObject({ code: 0, stdout: 'deleted upstream docs\n' });
    for (const output of [set, replaced, list, fresh, removed]) expect(output.stdout + output.stderr).not.toContain(SECRET);
  });
});
