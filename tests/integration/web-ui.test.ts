import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

describe('the server serves the web UI', () => {
  let t: TestServer;
  let dist: string;

  beforeAll(async () => {
    dist = await mkdtemp(path.join(tmpdir(), 'sandcast-web-'));
    await mkdir(path.join(dist, 'assets'));
    await writeFile(path.join(dist, 'index.html'), '<!doctype html><title>Sandcast</title><div id="root"></div>');
    await writeFile(path.join(dist, 'assets', 'app-abc123.js'), 'console.log(1)');
    t = await startTestServer({ database: pglite, env: { SANDCAST_WEB_DIST: dist } });
  });
  afterAll(async () => {
    await t?.close();
    await rm(dist, { recursive: true, force: true });
  });

  it('answers / with index.html and safe headers', async () => {
    const res = await fetch(`${t.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await res.text()).toContain('<div id="root">');
  });

  it('falls back to index.html for client-side routes', async () => {
    const res = await fetch(`${t.url}/environments/env_123/edit`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<div id="root">');
  });

  it('serves hashed assets with a long cache life', async () => {
    const res = await fetch(`${t.url}/assets/app-abc123.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toMatch(/immutable/);
  });

  it('a missing asset is a 404, not the page', async () => {
    expect((await fetch(`${t.url}/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${t.url}/..%2f..%2fetc%2fpasswd.txt`)).status).toBe(404);
  });

  it('unknown /api paths keep the API 404 envelope', async () => {
    const res = await t.fetch('/api/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: 'no route GET /api/nothing-here' } });
  });
});

describe('without a built UI', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ database: pglite, env: { SANDCAST_WEB_DIST: path.join(tmpdir(), 'sandcast-no-such-dist') } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('/ says how to build it', async () => {
    const res = await fetch(`${t.url}/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build -w apps/web');
  });
});
