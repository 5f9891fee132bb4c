import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type SandcastApiError, SandcastClient } from '@sandcast/client';
import { TERMINAL_MAX_FRAME_BYTES } from '@sandcast/contracts';
import { testDatabases } from '@sandcast/db/testing';
import { createMovableClock, loadConfig, startServer } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';
import { attachTerminal, rawTerminalSocket } from './support/terminal-client.ts';

const refused = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the API to refuse');
    },
    (e: unknown) => e as SandcastApiError,
  );

let environmentCount = 0;
/** A fresh environment with a running setup session (one active session per environment). */
async function runningSetup(client: SandcastClient, ttlSeconds = 3600) {
  const env = await client.environments.create({ name: `term-${++environmentCount}`, provider: 'fake', config: {} });
  return (await client.customImages.startSetup(env.id, { ttlSeconds })).session;
}

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`browser terminal [${database.kind}]`, () => {
    let t: TestServer;
    const clock = createMovableClock();

    beforeAll(async () => {
      t = await startTestServer({ database, clock, env: { SANDCAST_TERMINAL_AUTH_TIMEOUT_SECONDS: '0.4' } });
      await enableEnvironments(t.client);
    });
    afterAll(async () => {
      await t?.close();
    });

    it('issues a single-use token and attaches to a real shell; input, output and resize work', async () => {
      const session = await runningSetup(t.client);
      const token = await t.client.customImages.terminalSessionToken(session.id);
      expect(token).toMatchObject({ setupSessionId: session.id, environmentId: session.environmentId, connectionType: 'pty' });
      expect(token.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(token.websocketPath).toBe(
        `/api/environment-custom-image-setup-sessions/${session.id}/terminal/ws?terminalSessionId=${token.id}`,
      );
      const window = new Date(token.expiresAt).getTime() - clock.now().getTime();
      expect(window).toBeGreaterThan(4 * 60 * 1000);
      expect(window).toBeLessThanOrEqual(5 * 60 * 1000);

      const term = await attachTerminal(t.url, token, { cols: 91, rows: 27 });
      expect(term.ready).toEqual({ type: 'ready', terminalSessionId: token.id, reattached: false, replayBytes: 0 });
      term.type('echo "sum=$((6*7))"\r');
      await term.waitFor('sum=42');
      term.type('stty size\r');
      await term.waitFor('27 91');
      term.connection.resize(120, 40);
      const from = term.output().length;
      term.type('stty size\r');
      await term.waitFor('40 120', { from });
      term.connection.close();
      await term.connection.closed;

      // Nothing secret was written to the log: neither the token nor the WebSocket's query string.
      const logs = t.logs.join('\n');
      expect(logs).not.toContain(token.token);
      expect(logs).not.toContain('terminalSessionId=');
    });

    it('a token works once: a second use is refused with a policy close', async () => {
      const session = await runningSetup(t.client);
      const token = await t.client.customImages.terminalSessionToken(session.id);
      const first = await attachTerminal(t.url, token);
      const again = rawTerminalSocket(t.url, token.websocketPath);
      await again.opened;
      again.sendJson({ type: 'auth', token: token.token });
      expect((await again.closed).code).toBe(1008);
      expect(again.error()).toMatch(/already used/);
      first.connection.close();
    });

    it('refuses a wrong token, a token of another terminal session, and an unknown terminal session', async () => {
      const session = await runningSetup(t.client);
      const a = await t.client.customImages.terminalSessionToken(session.id);
      const b = await t.client.customImages.terminalSessionToken(session.id);
      for (const [path, token] of [
        [a.websocketPath, 'x'.repeat(43)],
        [a.websocketPath, b.token],
        [`/api/environment-custom-image-setup-sessions/${session.id}/terminal/ws?terminalSessionId=term_nope`, a.token],
      ] as const) {
        const socket = rawTerminalSocket(t.url, path);
        await socket.opened;
        socket.sendJson({ type: 'auth', token });
        expect((await socket.closed).code).toBe(1008);
        expect(socket.error()).toMatch(/not valid for this terminal session/);
      }
      // A terminal session id under another setup session does not match either.
      const other = await runningSetup(t.client);
      const socket = rawTerminalSocket(
        t.url,
        `/api/environment-custom-image-setup-sessions/${other.id}/terminal/ws?terminalSessionId=${a.id}`,
      );
      await socket.opened;
      socket.sendJson({ type: 'auth', token: a.token });
      expect((await socket.closed).code).toBe(1008);
      // …and the refusals did not burn the real tokens.
      (await attachTerminal(t.url, a)).connection.close();
      (await attachTerminal(t.url, b)).connection.close();
    });

    it('refuses a token in the URL, voids it, and never logs it', async () => {
      const session = await runningSetup(t.client);
      const token = await t.client.customImages.terminalSessionToken(session.id);
      const socket = rawTerminalSocket(t.url, `${token.websocketPath}&token=${token.token}`);
      await socket.opened;
      expect((await socket.closed).code).toBe(1008);
      expect(socket.error()).toMatch(/must not be sent in the URL/);
      expect(socket.error()).not.toContain(token.token);
      // The exposed token is void even when then sent properly.
      const retry = rawTerminalSocket(t.url, token.websocketPath);
      await retry.opened;
      retry.sendJson({ type: 'auth', token: token.token });
      expect((await retry.closed).code).toBe(1008);
      expect(t.logs.join('\n')).not.toContain(token.token);
    });

    it('closes a socket that sends no auth frame in time (a resize may come first)', async () => {
      const session = await runningSetup(t.client);
      const token = await t.client.customImages.terminalSessionToken(session.id);
      const socket = rawTerminalSocket(t.url, token.websocketPath);
      await socket.opened;
      socket.sendJson({ type: 'resize', cols: 100, rows: 30 });
      expect((await socket.closed).code).toBe(1008);
      expect(socket.error()).toMatch(/no \{type:"auth", token\} frame arrived within 0.4 s/);
    });

    it('closes a socket whose first frame is anything but auth or resize', async () => {
      const session = await runningSetup(t.client);
      const token = await t.client.customImages.terminalSessionToken(session.id);
      const firsts: Array<(s: ReturnType<typeof rawTerminalSocket>) => void> = [
        (s) => s.sendJson({ type: 'input', data: 'ls\r' }),
        (s) => s.socket.send('not json'),
        (s) => s.socket.send(Buffer.from('binary')),
        (s) => s.sendJson({ type: 'auth' }),
        (s) => s.sendJson({ type: 'auth', token: token.token, extra: true }),
      ];
      for (const first of firsts) {
        const socket = rawTerminalSocket(t.url, token.websocketPath);
        await socket.opened;
        first(socket);
        expect((await socket.closed).code).toBe(1008);
        expect(socket.error()).toMatch(/first frame must be \{type:"auth", token\}/);
      }
      // A bad query string is refused the same way.
      const bad = rawTerminalSocket(t.url, `${token.websocketPath}&cols=0`);
      await bad.opened;
      expect((await bad.closed).code).toBe(1008);
      expect(bad.error()).toMatch(/cols must be at least 1/);
    });

    it('closes a socket that sends an oversize frame, before or after auth', async () => {
      const session = await runningSetup(t.client);
      const big = JSON.stringify({ type: 'input', data: 'x'.repeat(TERMINAL_MAX_FRAME_BYTES) });
      const before = rawTerminalSocket(t.url, (await t.client.customImages.terminalSessionToken(session.id)).websocketPath);
      await before.opened;
      before.socket.send(big);
      expect((await before.closed).code).toBe(1009);
      expect(before.error()).toMatch(/exceeds the limit of 65536 bytes/);

      const token = await t.client.customImages.terminalSessionToken(session.id);
      const after = rawTerminalSocket(t.url, token.websocketPath);
      await after.opened;
      after.sendJson({ type: 'auth', token: token.token });
      expect(await after.frame('ready')).toMatchObject({ type: 'ready', terminalSessionId: token.id });
      after.socket.send(big);
      expect((await after.closed).code).toBe(1009);
    });

    it('answers 409 naming the status when the setup is not running, and refuses an issued token after the end', async () => {
      const session = await runningSetup(t.client);
      const token = await t.client.customImages.terminalSessionToken(session.id);
      await t.client.customImages.cancel(session.id);
      const error = await refused(t.client.customImages.terminalSessionToken(session.id));
      expect(error.status).toBe(409);
      expect(error.message).toMatch(/the setup session is cancelled \("Setup cancelled"\)/);
      const socket = rawTerminalSocket(t.url, token.websocketPath);
      await socket.opened;
      socket.sendJson({ type: 'auth', token: token.token });
      expect((await socket.closed).code).toBe(1008);
      expect(socket.error()).toMatch(/the setup session is cancelled/);
      expect((await refused(t.client.customImages.terminalSessionToken('setup_nope'))).status).toBe(404);
    });

    it('re-attaches a new token to the same shell and replays recent output', async () => {
      const session = await runningSetup(t.client);
      const first = await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(session.id));
      first.type('echo "pid=$$"; echo replay-marker-1\r');
      const seen = await first.waitFor(/pid=(\d+)[\s\S]*replay-marker-1\r?\n/);
      const pid = /pid=(\d+)/.exec(seen)![1];
      first.connection.close();
      await first.connection.closed;

      const second = await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(session.id));
      expect(await second.connection.ready).toMatchObject({ reattached: true });
      await second.waitFor('replay-marker-1');
      const from = second.output().length;
      second.type('echo "again=$$"\r');
      await second.waitFor(`again=${pid}`, { from });
      second.connection.close();
    });

    it('closes every terminal of a session with the matching reason: cancel, finish, expiry', async () => {
      const cancelled = await runningSetup(t.client);
      const a1 = await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(cancelled.id));
      const a2 = await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(cancelled.id));
      await t.client.customImages.cancel(cancelled.id);
      for (const term of [a1, a2]) expect(await term.connection.closed).toMatchObject({ code: 1000, reason: 'setup_cancelled' });

      const finished = await runningSetup(t.client);
      const b = await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(finished.id));
      await t.client.customImages.finish(finished.id);
      expect(await b.connection.closed).toMatchObject({ code: 1000, reason: 'setup_finished' });

      const expiring = await runningSetup(t.client, 120);
      const c = await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(expiring.id));
      clock.advance(121_000);
      await t.client.customImages.getSetup(expiring.id); // expiry applies on read (and on the sweep)
      expect(await c.connection.closed).toMatchObject({ code: 1000, reason: 'expired' });
    });

    it('refuses a ninth socket on one shell', async () => {
      const session = await runningSetup(t.client);
      const attached = [];
      for (let i = 0; i < 8; i++) attached.push(await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(session.id)));
      const token = await t.client.customImages.terminalSessionToken(session.id);
      const ninth = rawTerminalSocket(t.url, token.websocketPath);
      await ninth.opened;
      ninth.sendJson({ type: 'auth', token: token.token });
      expect((await ninth.closed).code).toBe(1008);
      expect(ninth.error()).toMatch(/8 terminals are already attached/);
      for (const term of attached) term.connection.close();
    });

    it('refuses a token whose connect window has passed', async () => {
      const session = await runningSetup(t.client);
      const token = await t.client.customImages.terminalSessionToken(session.id);
      clock.advance(5 * 60 * 1000 + 1000);
      const socket = rawTerminalSocket(t.url, token.websocketPath);
      await socket.opened;
      socket.sendJson({ type: 'auth', token: token.token });
      expect((await socket.closed).code).toBe(1008);
      expect(socket.error()).toMatch(/expired before it was used/);
    });

    it('a token is usable only until the setup expires when that is sooner than 5 minutes', async () => {
      const session = await runningSetup(t.client, 60);
      const token = await t.client.customImages.terminalSessionToken(session.id);
      expect(token.expiresAt).toBe(session.expiresAt);
    });
  });
}

describe('browser terminal: server shutdown', () => {
  it('closes attached terminals with server_shutdown', async () => {
    const t = await startTestServer({ database: testDatabases().find((d) => d.kind === 'pglite')! });
    try {
      await enableEnvironments(t.client);
      const session = await runningSetup(t.client);
      const term = await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(session.id));
      const waiting = rawTerminalSocket(t.url, (await t.client.customImages.terminalSessionToken(session.id)).websocketPath);
      await waiting.opened;
      await t.server.close();
      expect(await term.connection.closed).toMatchObject({ code: 1001, reason: 'server_shutdown' });
      expect((await waiting.closed).code).toBe(1001);
    } finally {
      await t.close();
    }
  });
});

describe('browser terminal: records survive a restart', () => {
  it('a used token stays used, an unused one still works, an expired one stays refused', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-terminal-restart-'));
    const clock = createMovableClock();
    // The embedded database in the data dir, so the second server reads what the first wrote.
    const config = loadConfig({
      SANDCAST_PORT: '0',
      SANDCAST_DATA_DIR: dataDir,
      SANDCAST_LOG_LEVEL: 'warn',
      SANDCAST_ENABLE_FAKE_PROVIDER: '1',
      SANDCAST_SSH_PORT: 'off',
    });
    try {
      const first = await startServer(config, { clock });
      const client1 = new SandcastClient({ baseUrl: first.url });
      await enableEnvironments(client1);
      const session = await runningSetup(client1);
      const used = await client1.customImages.terminalSessionToken(session.id);
      const unused = await client1.customImages.terminalSessionToken(session.id);
      const soonExpired = await client1.customImages.terminalSessionToken(session.id);
      (await attachTerminal(first.url, used)).connection.close();
      const pin = { setupSessionId: session.id, host: '127.0.0.1', port: 22, fingerprint: 'SHA256:first' };
      expect(await first.store.repos.terminalSessions.pinHostKey(pin)).toMatchObject({ ok: true, firstUse: true });
      await first.close();

      const second = await startServer(config, { clock });
      try {
        const refusedWith = async (token: typeof used) => {
          const socket = rawTerminalSocket(second.url, token.websocketPath);
          await socket.opened;
          socket.sendJson({ type: 'auth', token: token.token });
          expect((await socket.closed).code).toBe(1008);
          return socket.error();
        };
        expect(await refusedWith(used)).toMatch(/already used/);
        const term = await attachTerminal(second.url, unused);
        term.type('echo after-restart\r');
        await term.waitFor('after-restart');
        term.connection.close();
        clock.advance(5 * 60 * 1000 + 1000);
        expect(await refusedWith(soonExpired)).toMatch(/expired before it was used/);
        expect(await second.store.repos.terminalSessions.pinHostKey({ ...pin, fingerprint: 'SHA256:other' })).toEqual({
          ok: false,
          pinned: 'SHA256:first',
        });
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
