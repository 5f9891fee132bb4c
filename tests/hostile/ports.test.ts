import http from 'node:http';
import net from 'node:net';
import { testDatabases } from '@sandcast/db/testing';
import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import { createMovableClock } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { enableEnvironments, type TestServer } from '../integration/support/harness.ts';
import { requireForSuite } from '../integration/support/lifecycle.ts';
import { portRequest } from '../integration/support/port-client.ts';
import { attack, startHostileServer } from './support/attack.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

/** A raw request line and headers on the server's socket; the status line's code of the answer. */
function rawRequest(serverUrl: string, head: string): Promise<{ status: number; text: string }> {
  const { port } = new URL(serverUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () => socket.write(head));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text }));
  });
}

const hostOf = (url: string) => new URL(url).host;

describe('hostile: sandbox and setup session ports (fake provider: inputs, names, owners, tokens)', () => {
  let t: TestServer;
  let sandboxA: string;
  let sandboxB: string;
  let sessionId: string;
  /** Where each owner's ports are opened: a sandbox's, and a setup session's. */
  let collections: string[];
  let target: http.Server;
  let targetPort: number;
  const clock = createMovableClock();

  beforeAll(async () => {
    t = await startHostileServer({ database: pglite, clock });
    await enableEnvironments(t.client);
    const env = await t.client.environments.create({ name: 'ports-hostile', provider: 'fake', config: {} });
    sandboxA = (await t.client.sandboxes.create({ environmentId: env.id })).id;
    sandboxB = (await t.client.sandboxes.create({ environmentId: env.id })).id;
    sessionId = (await t.client.customImages.startSetup(env.id)).session.id;
    collections = [`/api/sandboxes/${sandboxA}/ports`, `/api/environment-custom-image-setup-sessions/${sessionId}/ports`];
    // The fake provider's "sandbox loopback" is the host's (tests only): a server for it to reach.
    target = http.createServer((request, response) => response.end(`target saw ${request.url}`));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetPort = (target.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    target.close();
    await t.close();
  });

  attack('ports 0, 65536, negative, fractional, strings, NUL and huge numbers are refused with 400', async () => {
    for (const collection of collections) {
      for (const port of [0, 65536, -1, 1.5, '80', '\0', null, 1e300, Number.MAX_SAFE_INTEGER, true, [80], { port: 80 }]) {
        const answer = await t.fetch(collection, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ port }),
        });
        expect(answer.status, `${collection} ${JSON.stringify(port)}`).toBe(400);
        // NUL is refused for every body before the port is looked at, with its own message.
        expect(answer.body).toMatchObject({ error: { message: expect.stringMatching(/1 to 65535|NUL/) } });
      }
      for (const visibility of ['PUBLIC', 'internal', '\0', 1]) {
        const answer = await t.fetch(collection, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ port: 80, visibility }),
        });
        expect(answer.status).toBe(400);
      }
    }
    expect(await t.client.sandboxes.ports.list(sandboxA)).toEqual([]);
    expect(await t.client.customImages.ports.list(sessionId)).toEqual([]);
  });

  attack('bad ports in the path: 0, 65536, leading zeros, exponents, "..", NUL, signs', async () => {
    for (const segment of [
      '0',
      '65536',
      '080',
      '1e3',
      '..',
      '%2E%2E',
      '..%2F..%2Fetc',
      '%00',
      '8080%00',
      '-1',
      '+80',
      '0x50',
      ' 80',
      '99999999999999999999',
    ]) {
      for (const [method, suffix] of [
        ['GET', '/url'],
        ['DELETE', ''],
      ] as const) {
        for (const collection of collections) {
          const answer = await t.fetch(`${collection}/${segment}${suffix}`, { method });
          expect(answer.status, `${method} ${collection} ${segment}`).toBeGreaterThanOrEqual(400);
          expect(answer.status, `${method} ${collection} ${segment}`).toBeLessThan(500);
        }
      }
    }
    for (const collection of collections) {
      const zero = await t.fetch(`${collection}/0/url`);
      expect(zero.body).toMatchObject({ error: { code: 'validation_failed', message: expect.stringContaining('1 to 65535') } });
    }
  });

  attack('a public port needs the instance setting, off by default', async () => {
    const refused = await t.client.sandboxes.ports.open(sandboxA, { port: targetPort, visibility: 'public' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 403, message: expect.stringContaining('allowPublicPorts') });
    expect(await t.client.sandboxes.ports.list(sandboxA)).toEqual([]);
  });

  attack('a private URL without a token, with a forged one, an expired one, or one of another sandbox is refused', async () => {
    const opened = await t.client.sandboxes.ports.open(sandboxA, { port: targetPort });
    await t.client.sandboxes.ports.open(sandboxB, { port: targetPort });
    try {
      const { url } = await t.client.sandboxes.ports.url(sandboxA, targetPort);
      const token = new URL(url).searchParams.get('sandcast_token')!;
      expect((await portRequest(opened.baseUrl)).status).toBe(401);
      for (const forged of [
        '',
        'x',
        `${token}x`,
        `${token.slice(0, -1)}A`,
        `zzzzzz.${'A'.repeat(43)}`,
        `${token}\0`,
        token.replace(/^[^.]+/, 'zzzzzzzz'),
      ]) {
        const answer = await portRequest(`${opened.baseUrl}?sandcast_token=${encodeURIComponent(forged)}`);
        expect(answer.status, forged).toBe(401);
        expect(answer.body).not.toContain('target saw');
      }
      // Sandbox A's token on sandbox B's same port.
      const baseB = (await t.client.sandboxes.ports.list(sandboxB))[0]!.baseUrl;
      expect((await portRequest(`${baseB}?sandcast_token=${token}`)).status).toBe(401);
      // An admin API key would do, but a made-up one does not; and the cookie form of a forged token neither.
      expect((await portRequest(opened.baseUrl, { headers: { authorization: 'Bearer sk_not_a_key' } })).status).toBe(401);
      expect((await portRequest(opened.baseUrl, { headers: { cookie: `sandcast_port=${token}x` } })).status).toBe(401);
      // The genuine token works, then expires.
      expect((await portRequest(url)).status).toBe(303);
      clock.advance(2 * 60 * 60 * 1000);
      try {
        expect((await portRequest(url)).status).toBe(401);
      } finally {
        clock.reset();
      }
    } finally {
      await t.client.sandboxes.ports.close(sandboxA, targetPort);
      await t.client.sandboxes.ports.close(sandboxB, targetPort);
    }
  });

  attack('Host names under the ports domain that name no open port, or are malformed, reach nothing', async () => {
    const bases = [
      (await t.client.sandboxes.ports.open(sandboxA, { port: targetPort })).baseUrl,
      (await t.client.customImages.ports.open(sessionId, { port: targetPort })).baseUrl,
    ];
    try {
      const serverPort = new URL(t.url).port;
      const hex = sandboxA.slice('sbx_'.length);
      const sessionHex = sessionId.slice('setup_'.length);
      const names = [
        `${targetPort}-sbx-${'0'.repeat(32)}.sandboxes.localhost`,
        `${targetPort + 1}-sbx-${hex}.sandboxes.localhost`,
        `0-sbx-${hex}.sandboxes.localhost`,
        `65536-sbx-${hex}.sandboxes.localhost`,
        `0${targetPort}-sbx-${hex}.sandboxes.localhost`,
        `${targetPort}-${sandboxA}.sandboxes.localhost`,
        `${targetPort}-sbx-${hex}.x.sandboxes.localhost`,
        `..sandboxes.localhost`,
        `sandboxes.localhost`,
        `22-sbx-${hex}.sandboxes.localhost`,
        // One owner's id under the other's label names nobody's port.
        `${targetPort}-setup-${hex}.sandboxes.localhost`,
        `${targetPort}-sbx-${sessionHex}.sandboxes.localhost`,
        `${targetPort}-${sessionId}.sandboxes.localhost`,
        `0-setup-${sessionHex}.sandboxes.localhost`,
        `65536-setup-${sessionHex}.sandboxes.localhost`,
        `22-setup-${sessionHex}.sandboxes.localhost`,
        `${targetPort}-setup-${sessionHex}.x.sandboxes.localhost`,
      ];
      for (const name of names) {
        const answer = await rawRequest(t.url, `GET / HTTP/1.1\r\nHost: ${name}:${serverPort}\r\nConnection: close\r\n\r\n`);
        expect(answer.status, name).toBeGreaterThanOrEqual(400);
        expect(answer.status, name).toBeLessThan(500);
        expect(answer.text).not.toContain('target saw');
      }
      // The API is never answered on a port's host name, and an absolute-form target cannot point elsewhere.
      for (const host of bases.map(hostOf)) {
        const api = await rawRequest(t.url, `GET /api/instance/settings HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
        expect(api.status, host).toBe(401);
        expect(api.text).not.toContain('enableEnvironments');
        const absolute = await rawRequest(t.url, `GET http://127.0.0.1:22/ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
        expect(absolute.status, host).toBe(400);
        const nul = await rawRequest(t.url, `GET /a\0b HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
        expect(nul.status, host).toBe(400);
      }
    } finally {
      await t.client.sandboxes.ports.close(sandboxA, targetPort);
      await t.client.customImages.ports.close(sessionId, targetPort);
    }
  });

  attack('session ids with NUL, "..", another kind of id or none at all reach no session', async () => {
    for (const id of ['%00', 'setup_%00', '..', '%2E%2E', '..%2F..%2Fapi', sandboxA, `setup_${'0'.repeat(32)}`, 'x'.repeat(5000)]) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['POST', ''],
        ['GET', '/8080/url'],
        ['DELETE', '/8080'],
      ] as const) {
        const answer = await t.fetch(`/api/environment-custom-image-setup-sessions/${id}/ports${suffix}`, {
          method,
          ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ port: 8080 }) } : {}),
        });
        expect(answer.status, `${method} ${id.slice(0, 40)}${suffix}`).toBeGreaterThanOrEqual(400);
        expect(answer.status, `${method} ${id.slice(0, 40)}${suffix}`).toBeLessThan(500);
      }
    }
  });

  attack("a sandbox's token or cookie on a setup session's host, and the reverse, are refused", async () => {
    const setupPort = await t.client.customImages.ports.open(sessionId, { port: targetPort });
    const sandboxPort = await t.client.sandboxes.ports.open(sandboxA, { port: targetPort });
    try {
      const setupUrl = (await t.client.customImages.ports.url(sessionId, targetPort)).url;
      const setupToken = new URL(setupUrl).searchParams.get('sandcast_token')!;
      const sandboxToken = new URL((await t.client.sandboxes.ports.url(sandboxA, targetPort)).url).searchParams.get('sandcast_token')!;
      for (const [base, token] of [
        [setupPort.baseUrl, sandboxToken],
        [sandboxPort.baseUrl, setupToken],
      ] as const) {
        const viaQuery = await portRequest(`${base}?sandcast_token=${token}`);
        expect(viaQuery.status).toBe(401);
        expect(viaQuery.body).not.toContain('target saw');
        expect((await portRequest(base, { headers: { cookie: `sandcast_port=${token}` } })).status).toBe(401);
      }
      // The genuine token still works on its own host.
      expect((await portRequest(setupUrl)).status).toBe(303);
    } finally {
      await t.client.customImages.ports.close(sessionId, targetPort);
      await t.client.sandboxes.ports.close(sandboxA, targetPort);
    }
  });

  attack('a public setup port needs the setting; an ended setup session opens nothing', async () => {
    await expect(t.client.customImages.ports.open(sessionId, { port: targetPort, visibility: 'public' })).rejects.toMatchObject({
      status: 403,
    });
    const env = await t.client.environments.create({ name: 'setup-ports-hostile-ended', provider: 'fake', config: {} });
    const ended = (await t.client.customImages.startSetup(env.id)).session.id;
    await t.client.customImages.cancel(ended);
    for (const port of [22, 8080]) {
      await expect(t.client.customImages.ports.open(ended, { port })).rejects.toMatchObject({ status: 409 });
    }
    expect(await t.client.customImages.ports.list(ended)).toEqual([]);
  });
});

const localRunnable = requireForSuite('hostile ports (local)', await localSkipReason());

describe.skipIf(!localRunnable)('hostile: sandbox ports on the local provider (network: none)', () => {
  let t: TestServer;
  let sandbox: string;
  let session: string;
  let hostServer: net.Server;
  let hostPort: number;
  beforeAll(async () => {
    t = await startHostileServer({ database: pglite, providers: (dataDir) => [createLocalProvider({ dataDir })] });
    await enableEnvironments(t.client);
    const env = await t.client.environments.create({ name: 'ports-hostile-local', provider: 'local', config: {} });
    sandbox = (await t.client.sandboxes.create({ environmentId: env.id })).id;
    session = (await t.client.customImages.startSetup(env.id)).session.id;
    // Something listening on the host's loopback that a forwarded port must never reach.
    hostServer = net.createServer((socket) => socket.end('HOST-SECRET\r\n'));
    await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
    hostPort = (hostServer.address() as net.AddressInfo).port;
  }, 60_000);
  afterAll(async () => {
    hostServer?.close();
    await t?.client.sandboxes.delete(sandbox).catch(() => undefined);
    await t?.client.customImages.cancel(session).catch(() => undefined);
    await t?.close();
  });

  attack(
    "a port opened on the sandbox reaches the sandbox's loopback, never the host's (22, the server's own port, a host service)",
    async () => {
      const serverPort = Number(new URL(t.url).port);
      // The same for a setup session's sandbox: its lease is a sandbox of the provider like any other.
      for (const [ports, owner] of [
        [t.client.sandboxes.ports, sandbox],
        [t.client.customImages.ports, session],
      ] as const) {
        for (const port of [22, serverPort, hostPort]) {
          const opened = await ports.open(owner, { port });
          const { url } = await ports.url(owner, port);
          const exchanged = await portRequest(url);
          const cookie = String(exchanged.headers['set-cookie']).split(';')[0]!;
          const answer = await portRequest(opened.baseUrl, { headers: { cookie } });
          expect(answer.status, `${owner} ${port}`).toBe(502);
          expect(answer.body).toContain(`nothing listens on port ${port} inside the sandbox`);
          expect(answer.body).not.toMatch(/HOST-SECRET|SSH-|enableEnvironments/);
          await ports.close(owner, port);
        }
      }
    },
    60_000,
  );
});
