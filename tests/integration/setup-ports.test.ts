import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider } from '@sandcast/provider-fake';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { createMovableClock } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';
import { loopbackLookup, portRequest } from './support/port-client.ts';

/** Opens a WebSocket through a port URL with `cookie`; resolves once it is open. */
function openSocket(baseUrl: string, cookie: string): Promise<WebSocket> {
  const socket = new WebSocket(baseUrl.replace(/^http/, 'ws'), { lookup: loopbackLookup, headers: { cookie } });
  socket.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
  });
}

const closedSocket = (socket: WebSocket) =>
  new Promise<void>((resolve) => {
    if (socket.readyState === WebSocket.CLOSED) resolve();
    else socket.once('close', () => resolve());
  });

/** Trades a port URL's token for its cookie (`name=value`). */
async function cookieFor(url: string): Promise<string> {
  const exchanged = await portRequest(url);
  expect(exchanged.status).toBe(303);
  return String(exchanged.headers['set-cookie']).split(';')[0]!;
}

for (const database of testDatabases()) {
  // The fake provider's "sandbox loopback" is the host's (tests only): a server here stands for one in the setup sandbox.
  describe.skipIf(database.skipReason !== null)(`setup session ports on the fake provider [${database.kind}]`, () => {
    let t: TestServer;
    let target: http.Server;
    let targetPort: number;
    let environmentId: string;
    const clock = createMovableClock();
    /** Runs inside the provider's capture, before it captures anything. */
    let atCapture: (() => Promise<void>) | null = null;

    beforeAll(async () => {
      target = http.createServer((request, response) => response.end(`setup app saw ${request.url}`));
      const wss = new WebSocketServer({ server: target });
      wss.on('connection', (socket) => socket.on('message', (data) => socket.send(`echo:${data}`)));
      await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
      targetPort = (target.address() as AddressInfo).port;
      const providers = (dataDir: string): SandboxProvider[] => {
        const fake = createFakeProvider({ dataDir });
        return [
          {
            ...fake,
            captureTemplate: async (request) => {
              await atCapture?.();
              return fake.captureTemplate(request);
            },
          },
        ];
      };
      t = await startTestServer({ database, clock, providers });
      await enableEnvironments(t.client);
      environmentId = (await t.client.environments.create({ name: `setup-ports-${database.kind}`, provider: 'fake', config: {} })).id;
    });
    afterAll(async () => {
      target.closeAllConnections();
      target.close();
      await t?.close();
    });

    it('serves a port of the setup sandbox under a setup host name; cancel closes it and cuts its connections', async () => {
      const { session } = await t.client.customImages.startSetup(environmentId);
      const opened = await t.client.customImages.ports.open(session.id, { port: targetPort });
      expect(opened).toMatchObject({ sessionId: session.id, port: targetPort, visibility: 'private' });
      expect(new URL(opened.baseUrl).hostname).toBe(`${targetPort}-${session.id.replace('_', '-')}.sandboxes.localhost`);
      expect(new URL(opened.baseUrl).hostname).toMatch(/^\d+-setup-[0-9a-f]{32}\.sandboxes\.localhost$/);
      expect(await t.client.customImages.ports.list(session.id)).toEqual([opened]);

      expect((await portRequest(opened.baseUrl)).status).toBe(401);
      const { url, expiresAt } = await t.client.customImages.ports.url(session.id, targetPort);
      expect(expiresAt).toBeTruthy();
      const cookie = await cookieFor(url);
      const hello = await portRequest(`${opened.baseUrl}hello`, { headers: { cookie } });
      expect(hello).toMatchObject({ status: 200, body: 'setup app saw /hello' });

      const socket = await openSocket(opened.baseUrl, cookie);
      const reply = new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))));
      socket.send('hi');
      expect(await reply).toBe('echo:hi');

      await t.client.customImages.cancel(session.id);
      await closedSocket(socket);
      expect((await portRequest(`${opened.baseUrl}hello`, { headers: { cookie } })).status).toBe(404);
      expect(await t.client.customImages.ports.list(session.id)).toEqual([]);
      await expect(t.client.customImages.ports.open(session.id, { port: targetPort })).rejects.toMatchObject({ status: 409 });
    });

    it("keeps a sandbox's tokens and a setup session's apart, both ways", async () => {
      const { session } = await t.client.customImages.startSetup(environmentId);
      const sandbox = await t.client.sandboxes.create({ environmentId });
      try {
        const setupPort = await t.client.customImages.ports.open(session.id, { port: targetPort });
        const sandboxPort = await t.client.sandboxes.ports.open(sandbox.id, { port: targetPort });
        const setupToken = new URL((await t.client.customImages.ports.url(session.id, targetPort)).url).search;
        const sandboxToken = new URL((await t.client.sandboxes.ports.url(sandbox.id, targetPort)).url).search;
        expect((await portRequest(`${setupPort.baseUrl}${sandboxToken}`)).status).toBe(401);
        expect((await portRequest(`${sandboxPort.baseUrl}${setupToken}`)).status).toBe(401);
        // The cookies neither: each is bound to its owner, whatever host it is sent to.
        const setupCookie = await cookieFor(`${setupPort.baseUrl}${setupToken}`);
        const sandboxCookie = await cookieFor(`${sandboxPort.baseUrl}${sandboxToken}`);
        expect((await portRequest(sandboxPort.baseUrl, { headers: { cookie: setupCookie } })).status).toBe(401);
        expect((await portRequest(setupPort.baseUrl, { headers: { cookie: sandboxCookie } })).status).toBe(401);
        expect((await portRequest(setupPort.baseUrl, { headers: { cookie: setupCookie } })).status).toBe(200);
        // Closing the setup session's port leaves the sandbox's open.
        await t.client.customImages.ports.close(session.id, targetPort);
        expect((await portRequest(setupPort.baseUrl, { headers: { cookie: setupCookie } })).status).toBe(404);
        expect((await portRequest(sandboxPort.baseUrl, { headers: { cookie: sandboxCookie } })).status).toBe(200);
      } finally {
        await t.client.customImages.cancel(session.id).catch(() => undefined);
        await t.client.sandboxes.delete(sandbox.id).catch(() => undefined);
      }
    });

    it('Finished closes the ports before the capture begins', async () => {
      const { session } = await t.client.customImages.startSetup(environmentId);
      const opened = await t.client.customImages.ports.open(session.id, { port: targetPort });
      const cookie = await cookieFor((await t.client.customImages.ports.url(session.id, targetPort)).url);
      const socket = await openSocket(opened.baseUrl, cookie);
      // Were the ports still open during the capture, these would wait for ever (the test times out).
      const seen: number[] = [];
      atCapture = async () => {
        await closedSocket(socket);
        seen.push((await portRequest(opened.baseUrl, { headers: { cookie } })).status);
      };
      try {
        await t.client.customImages.finish(session.id);
      } finally {
        atCapture = null;
      }
      expect(seen).toEqual([404]);
      expect(await t.client.customImages.ports.list(session.id)).toEqual([]);
    });

    it('expiry ends access at once (before the sweep records it), and the sweep closes the ports', async () => {
      const { session } = await t.client.customImages.startSetup(environmentId, { ttlSeconds: 60 });
      const opened = await t.client.customImages.ports.open(session.id, { port: targetPort });
      const cookie = await cookieFor((await t.client.customImages.ports.url(session.id, targetPort)).url);
      const socket = await openSocket(opened.baseUrl, cookie);
      clock.advance(61_000);
      try {
        expect((await portRequest(opened.baseUrl, { headers: { cookie } })).status).toBe(404);
        expect(await t.server.services.setupSessions.sweepExpired()).toBe(1);
        await closedSocket(socket);
        expect((await t.client.customImages.getSetup(session.id)).session.status).toBe('timed_out');
        expect(await t.client.customImages.ports.list(session.id)).toEqual([]);
      } finally {
        clock.reset();
      }
    });

    it('a setup sandbox lost while the server was down fails the session, and its ports close', async () => {
      const { session } = await t.client.customImages.startSetup(environmentId);
      const opened = await t.client.customImages.ports.open(session.id, { port: targetPort });
      const cookie = await cookieFor((await t.client.customImages.ports.url(session.id, targetPort)).url);
      const socket = await openSocket(opened.baseUrl, cookie);
      const fake = t.server.providers.get('fake')!.provider;
      await fake.cancelInteractiveSetup(session.providerLeaseId!);
      await t.server.services.setupSessions.recoverAfterRestart();
      await closedSocket(socket);
      expect((await t.client.customImages.getSetup(session.id)).session.status).toBe('failed');
      expect(await t.client.customImages.ports.list(session.id)).toEqual([]);
      expect((await portRequest(opened.baseUrl, { headers: { cookie } })).status).toBe(404);
    });

    it('refuses unknown sessions and ports that are not open with a clear 404', async () => {
      await expect(t.client.customImages.ports.list(`setup_${'0'.repeat(32)}`)).rejects.toMatchObject({ status: 404 });
      const { session } = await t.client.customImages.startSetup(environmentId);
      try {
        await expect(t.client.customImages.ports.url(session.id, 4000)).rejects.toMatchObject({
          status: 404,
          message: expect.stringContaining(`/api/environment-custom-image-setup-sessions/${session.id}/ports`),
        });
        await expect(t.client.customImages.ports.close(session.id, 4000)).rejects.toMatchObject({ status: 404 });
      } finally {
        await t.client.customImages.cancel(session.id);
      }
    });
  });
}
