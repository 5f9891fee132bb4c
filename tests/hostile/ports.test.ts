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

describe('hostile: sandbox ports (fake provider: inputs, names, tokens)', () => {
  let t: TestServer;
  let sandboxA: string;
  let sandboxB: string;
  let target: http.Server;
  let targetPort: number;
  const clock = createMovableClock();

  beforeAll(async () => {
    t = await startHostileServer({ database: pglite, clock });
    await enableEnvironments(t.client);
    const env = await t.client.environments.create({ name: 'ports-hostile', provider: 'fake', config: {} });
    sandboxA = (await t.client.sandboxes.create({ environmentId: env.id })).id;
    sandboxB = (await t.client.sandboxes.create({ environmentId: env.id })).id;
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
    for (const port of [0, 65536, -1, 1.5, '80', '\0', null, 1e300, Number.MAX_SAFE_INTEGER, true, [80], { port: 80 }]) {
      const answer = await t.fetch(`/api/sandboxes/${sandboxA}/ports`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ port }),
      });
      expect(answer.status, JSON.stringify(port)).toBe(400);
      // NUL is refused for every body before the port is looked at, with its own message.
      expect(answer.body).toMatchObject({ error: { message: expect.stringMatching(/1 to 65535|NUL/) } });
    }
    for (const visibility of ['PUBLIC', 'internal', '\0', 1]) {
      const answer = await t.fetch(`/api/sandboxes/${sandboxA}/ports`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ port: 80, visibility }),
      });
      expect(answer.status).toBe(400);
    }
    expect(await t.client.sandboxes.ports.list(sandboxA)).toEqual([]);
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
        const answer = await t.fetch(`/api/sandboxes/${sandboxA}/ports/${segment}${suffix}`, { method });
        expect(answer.status, `${method} ${segment}`).toBeGreaterThanOrEqual(400);
        expect(answer.status, `${method} ${segment}`).toBeLessThan(500);
      }
    }
    const zero = await t.fetch(`/api/sandboxes/${sandboxA}/ports/0/url`);
    expect(zero.body).toMatchObject({ error: { code: 'validation_failed', message: expect.stringContaining('1 to 65535') } });
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
    await t.client.sandboxes.ports.open(sandboxA, { port: targetPort });
    try {
      const base = (await t.client.sandboxes.ports.list(sandboxA))[0]!.baseUrl;
      const serverPort = new URL(t.url).port;
      const hex = sandboxA.slice(4);
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
      ];
      for (const name of names) {
        const answer = await rawRequest(t.url, `GET / HTTP/1.1\r\nHost: ${name}:${serverPort}\r\nConnection: close\r\n\r\n`);
        expect(answer.status, name).toBeGreaterThanOrEqual(400);
        expect(answer.status, name).toBeLessThan(500);
        expect(answer.text).not.toContain('target saw');
      }
      // The API is never answered on a port's host name, and an absolute-form target cannot point elsewhere.
      const host = hostOf(base);
      const api = await rawRequest(t.url, `GET /api/instance/settings HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(api.status).toBe(401);
      expect(api.text).not.toContain('enableEnvironments');
      const absolute = await rawRequest(t.url, `GET http://127.0.0.1:22/ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(absolute.status).toBe(400);
      const nul = await rawRequest(t.url, `GET /a\0b HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(nul.status).toBe(400);
    } finally {
      await t.client.sandboxes.ports.close(sandboxA, targetPort);
    }
  });
});

const localRunnable = requireForSuite('hostile ports (local)', await localSkipReason());

describe.skipIf(!localRunnable)('hostile: sandbox ports on the local provider (network: none)', () => {
  let t: TestServer;
  let sandbox: string;
  let hostServer: net.Server;
  let hostPort: number;
  beforeAll(async () => {
    t = await startHostileServer({ database: pglite, providers: (dataDir) => [createLocalProvider({ dataDir })] });
    await enableEnvironments(t.client);
    const env = await t.client.environments.create({ name: 'ports-hostile-local', provider: 'local', config: {} });
    sandbox = (await t.client.sandboxes.create({ environmentId: env.id })).id;
    // Something listening on the host's loopback that a forwarded port must never reach.
    hostServer = net.createServer((socket) => socket.end('HOST-SECRET\r\n'));
    await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
    hostPort = (hostServer.address() as net.AddressInfo).port;
  }, 60_000);
  afterAll(async () => {
    hostServer?.close();
    await t?.client.sandboxes.delete(sandbox).catch(() => undefined);
    await t?.close();
  });

  attack(
    "a port opened on the sandbox reaches the sandbox's loopback, never the host's (22, the server's own port, a host service)",
    async () => {
      const serverPort = Number(new URL(t.url).port);
      for (const port of [22, serverPort, hostPort]) {
        const opened = await t.client.sandboxes.ports.open(sandbox, { port });
        const { url } = await t.client.sandboxes.ports.url(sandbox, port);
        const exchanged = await portRequest(url);
        const cookie = String(exchanged.headers['set-cookie']).split(';')[0]!;
        const answer = await portRequest(opened.baseUrl, { headers: { cookie } });
        expect(answer.status, String(port)).toBe(502);
        expect(answer.body).toContain(`nothing listens on port ${port} inside the sandbox`);
        expect(answer.body).not.toMatch(/HOST-SECRET|SSH-|enableEnvironments/);
        await t.client.sandboxes.ports.close(sandbox, port);
      }
    },
    60_000,
  );
});
