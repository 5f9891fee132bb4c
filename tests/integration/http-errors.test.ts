import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;
const json = { 'content-type': 'application/json' };

describe('HTTP errors: 4xx with a clear message, never a 500', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ database: pglite });
    await enableEnvironments(t.client);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('malformed JSON is a 400 bad_request', async () => {
    const res = await t.fetch('/api/environments', { method: 'POST', headers: json, body: '{"name": ' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'bad_request', message: expect.stringContaining('not valid JSON') } });
  });

  it('a __proto__ key is refused', async () => {
    const res = await t.fetch('/api/instance/settings', { method: 'PATCH', headers: json, body: '{"__proto__": {"admin": true}}' });
    expect(res.status).toBe(400);
  });

  it('unknown fields are refused by strict schemas, naming them', async () => {
    const res = await t.fetch('/api/instance/settings', {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ experimental: { enableEnvironment: true } }),
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'validation_failed', message: expect.stringContaining('enableEnvironment') } });
  });

  it('wrong types are a 400 with the field path', async () => {
    const res = await t.fetch('/api/instance/settings', {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ experimental: { enableEnvironments: 'yes' } }),
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { details: { issues: [{ path: 'experimental.enableEnvironments' }] } } });
  });

  it('a missing body where one is required is a 400', async () => {
    const res = await t.fetch('/api/environments', { method: 'POST' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'validation_failed' } });
  });

  it('an oversized body is a 413', async () => {
    const res = await t.fetch('/api/environments', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'big', provider: 'fake', config: { image: 'x'.repeat(2 * 1024 * 1024) } }),
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: { code: 'payload_too_large' } });
  });

  it('a body that is not JSON is a 415', async () => {
    const res = await t.fetch('/api/environments', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'name=x' });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ error: { code: 'unsupported_media_type' } });
  });

  it('an unknown route is a 404 in the same envelope', async () => {
    const res = await t.fetch('/api/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: 'no route GET /api/nothing-here' } });
  });

  it('an unexpected failure is a 500 that leaks nothing and is logged', async () => {
    const broken = await startTestServer({
      database: pglite,
      beforeListen: (app) => {
        app.get('/api/test/broken', { config: { access: 'public' } }, async () => {
          throw new Error('database password is hunter2');
        });
      },
    });
    try {
      const res = await broken.fetch('/api/test/broken');
      expect(res.status).toBe(500);
      expect(res.text).not.toContain('hunter2');
      expect(res.body).toMatchObject({ error: { code: 'internal' } });
      expect(broken.logs.some((l) => l.includes('request failed'))).toBe(true);
      // Requests are logged at debug, but an answer of 500 or more stays visible at warn.
      const completed = broken.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request completed');
      expect(completed.find((l) => l.res?.statusCode === 500)?.level).toBe(40);
      const health = await broken.fetch('/api/health');
      expect(health.status).toBe(200);
      const healthLine = broken.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request completed' && l.res?.statusCode === 200);
      expect(healthLine.map((l) => l.level)).toEqual([20]);
    } finally {
      await broken.close();
    }
  });
});

describe('the log of a failed query', () => {
  it('keeps the SQL parameters out (they hold key hashes, names, config)', async () => {
    const broken = await startTestServer({
      database: pglite,
      beforeListen: (app) => {
        app.get('/api/test/query-failed', { config: { access: 'public' } }, async () => {
          // The shape drizzle's DrizzleQueryError has.
          const error = new Error('Failed query: select * from api_keys where key_hash = $1\nparams: 9f86d081884c7d659a2feaa0c55ad015');
          Object.assign(error, { query: 'select * from api_keys where key_hash = $1', params: ['9f86d081884c7d659a2feaa0c55ad015'] });
          throw error;
        });
      },
    });
    try {
      expect((await broken.fetch('/api/test/query-failed')).status).toBe(500);
      const logs = broken.logs.join('\n');
      expect(logs).toContain('Failed query: select * from api_keys');
      expect(logs).not.toContain('9f86d081884c7d659a2feaa0c55ad015');
    } finally {
      await broken.close();
    }
  });
});

describe('graceful shutdown', () => {
  it('lets an in-flight request finish, then refuses new connections', async () => {
    let markStarted: () => void = () => undefined;
    let markClosing: () => void = () => undefined;
    let release: () => void = () => undefined;
    const started = new Promise<void>((r) => {
      markStarted = r;
    });
    const closeBegan = new Promise<void>((r) => {
      markClosing = r;
    });
    const t = await startTestServer({
      database: pglite,
      beforeListen: (app) => {
        // The event that says shutdown has begun (instead of sleeping and hoping it has).
        app.addHook('preClose', async () => markClosing());
        app.get('/api/test/slow', { config: { access: 'public' } }, async () => {
          markStarted();
          await new Promise<void>((r) => {
            release = r;
          });
          return { finished: true };
        });
      },
    });
    const inFlight = t.fetch('/api/test/slow');
    await started;
    const closing = t.close();
    await closeBegan;
    release();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ finished: true });
    await closing;
    await expect(fetch(`${t.url}/api/health`)).rejects.toThrow();
  });
});
