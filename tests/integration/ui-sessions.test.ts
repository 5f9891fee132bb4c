import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SandcastApiError, SandcastClient } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import { createMovableClock } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/harness.ts';

/** The `sandcast_session=<token>` pair from a Set-Cookie answer. */
function sessionCookie(response: Response): string {
  const header = response.headers.get('set-cookie') ?? '';
  const pair = header.split(';')[0] ?? '';
  expect(pair).toMatch(/^sandcast_session=[A-Za-z0-9_-]{43}$/);
  return pair;
}

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`web UI sessions in authenticated mode [${database.kind}]`, () => {
    let t: TestServer;
    let admin: string;
    let agent: string;
    const clock = createMovableClock();

    const login = (apiKey: string) =>
      fetch(`${t.url}/api/auth/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey }),
      });
    const withCookie = (cookie: string, init: RequestInit = {}) => ({ ...init, headers: { ...(init.headers ?? {}), cookie } });

    beforeAll(async () => {
      t = await startTestServer({ database, mode: 'authenticated', clock, env: { SANDCAST_UI_SESSION_HOURS: '1' } });
      admin = (await readFile(path.join(t.dataDir, 'admin-api-key'), 'utf8')).trim();
      agent = (await t.clientWithKey(admin).keys.create({ name: 'an agent', role: 'agent' })).secret;
    });
    afterAll(async () => {
      await t?.close();
    });

    it('anonymous callers are told the mode and that they are not logged in', async () => {
      const res = await t.fetch('/api/auth/session');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ deploymentMode: 'authenticated', authenticated: false, role: null, via: null, expiresAt: null });
    });

    it('login with a bad key is a 401 and sets no cookie', async () => {
      const res = await login('sc_not-a-real-key');
      expect(res.status).toBe(401);
      expect(res.headers.get('set-cookie')).toBeNull();
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('unauthorized');
      expect(body.error.message).toMatch(/admin-api-key/);
    });

    it('login with a good key sets an httpOnly SameSite=Strict cookie that does not contain the key', async () => {
      const res = await login(admin);
      expect(res.status).toBe(201);
      const header = res.headers.get('set-cookie')!;
      expect(header).toMatch(/HttpOnly/);
      expect(header).toMatch(/SameSite=Strict/);
      expect(header).toMatch(/Path=\//);
      expect(header).toMatch(/Max-Age=(3599|3600);/);
      expect(header).not.toContain(admin);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ deploymentMode: 'authenticated', authenticated: true, role: 'admin', via: 'cookie' });
    });

    it('the cookie authenticates reads; writes need the CSRF header', async () => {
      const cookie = sessionCookie(await login(admin));
      expect((await t.fetch('/api/instance/settings')).status).toBe(401);
      const read = await t.fetch('/api/instance/settings', withCookie(cookie));
      expect(read.status).toBe(200);
      const who = await t.fetch('/api/auth/session', withCookie(cookie));
      expect(who.body).toMatchObject({ authenticated: true, role: 'admin', via: 'cookie' });

      const patch = { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ experimental: {} }) };
      const forged = await t.fetch('/api/instance/settings', withCookie(cookie, patch));
      expect(forged.status).toBe(403);
      expect((forged.body as { error: { message: string } }).error.message).toContain('x-sandcast-csrf');
      const allowed = await t.fetch(
        '/api/instance/settings',
        withCookie(cookie, { ...patch, headers: { ...patch.headers, 'x-sandcast-csrf': '1' } }),
      );
      expect(allowed.status).toBe(200);
    });

    it('the typed client in browser mode sends the CSRF header on writes', async () => {
      const cookie = sessionCookie(await login(admin));
      const browserLike = new SandcastClient({
        baseUrl: t.url,
        credentials: 'include',
        csrfHeader: true,
        fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), cookie } }),
      });
      const settings = await browserLike.settings.update({ experimental: { enableSandboxDuplexBridge: false } });
      expect(settings.experimental.enableSandboxDuplexBridge).toBe(false);
    });

    it('an agent key logs in as an agent and stays one', async () => {
      const cookie = sessionCookie(await login(agent));
      expect((await t.fetch('/api/auth/session', withCookie(cookie))).body).toMatchObject({ role: 'agent' });
      expect((await t.fetch('/api/instance/settings', withCookie(cookie))).status).toBe(403);
    });

    it('logout invalidates the session and clears the cookie', async () => {
      const cookie = sessionCookie(await login(admin));
      const out = await fetch(`${t.url}/api/auth/session`, withCookie(cookie, { method: 'DELETE', headers: { 'x-sandcast-csrf': '1' } }));
      expect(out.status).toBe(200);
      expect(await out.json()).toEqual({ loggedOut: true });
      expect(out.headers.get('set-cookie')).toMatch(/^sandcast_session=; Max-Age=0/);
      expect((await t.fetch('/api/instance/settings', withCookie(cookie))).status).toBe(401);
    });

    it('an expired UI session is refused', async () => {
      const cookie = sessionCookie(await login(admin));
      expect((await t.fetch('/api/instance/settings', withCookie(cookie))).status).toBe(200);
      clock.advance(3_600_000 + 1000);
      try {
        expect((await t.fetch('/api/instance/settings', withCookie(cookie))).status).toBe(401);
        expect((await t.fetch('/api/auth/session', withCookie(cookie))).body).toMatchObject({ authenticated: false });
      } finally {
        clock.reset();
      }
    });

    it('revoking the key ends its UI sessions', async () => {
      const created = await t.clientWithKey(admin).keys.create({ name: 'short-lived', role: 'admin' });
      const cookie = sessionCookie(await login(created.secret));
      expect((await t.fetch('/api/instance/settings', withCookie(cookie))).status).toBe(200);
      await t.clientWithKey(admin).keys.revoke(created.key.id);
      expect((await t.fetch('/api/instance/settings', withCookie(cookie))).status).toBe(401);
    });

    it('stores only a hash of the session token', async () => {
      const cookie = sessionCookie(await login(admin));
      const token = cookie.split('=')[1]!;
      const rows = (await t.server.store.repos.uiSessions.findLive(token, new Date())) ?? null;
      expect(rows).toBeNull();
    });

    it('the client reports a bad login as SandcastApiError unauthorized', async () => {
      const error = await new SandcastClient({ baseUrl: t.url }).auth.login('nope').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandcastApiError);
      expect((error as SandcastApiError).code).toBe('unauthorized');
    });
  });
}
