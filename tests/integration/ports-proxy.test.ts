import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { enableEnvironments, startTestServer } from './support/harness.ts';
import { loopbackLookup, portRequest } from './support/port-client.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

// The fake provider's "sandbox loopback" is the host's (tests only): the proxy itself, without root.
describe('the sandbox port proxy (fake provider)', () => {
  let target: http.Server;
  let targetPort: number;
  beforeAll(async () => {
    target = http.createServer((request, response) =>
      response.end(`auth=${request.headers.authorization ?? ''} cookie=${request.headers.cookie ?? ''}`),
    );
    const wss = new WebSocketServer({ server: target });
    wss.on('connection', (socket) => socket.on('message', (data) => socket.send(`echo:${data}`)));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetPort = (target.address() as AddressInfo).port;
  });
  afterAll(() => {
    target.closeAllConnections();
    target.close();
  });

  it('takes an admin API key as bearer in authenticated mode and hides it from the sandbox; public ports need the setting', async () => {
    const t = await startTestServer({ database: pglite, mode: 'authenticated' });
    try {
      const adminKey = (await readFile(path.join(t.dataDir, 'admin-api-key'), 'utf8').catch(() => null))?.trim();
      expect(adminKey, 'the bootstrap admin key file').toBeTruthy();
      const admin = t.clientWithKey(adminKey!);
      await enableEnvironments(admin);
      const env = await admin.environments.create({ name: 'proxy-auth', provider: 'fake', config: {} });
      const sandbox = await admin.sandboxes.create({ environmentId: env.id });
      const opened = await admin.sandboxes.ports.open(sandbox.id, { port: targetPort });
      expect((await portRequest(opened.baseUrl)).status).toBe(401);
      const viaKey = await portRequest(opened.baseUrl, { headers: { authorization: `Bearer ${adminKey}` } });
      expect(viaKey.status).toBe(200);
      expect(viaKey.body).toBe('auth= cookie=');

      await expect(admin.sandboxes.ports.open(sandbox.id, { port: targetPort, visibility: 'public' })).rejects.toMatchObject({
        status: 403,
      });
      await admin.settings.update({ security: { allowPublicPorts: true } });
      await admin.sandboxes.ports.open(sandbox.id, { port: targetPort, visibility: 'public' });
      const open = await portRequest(opened.baseUrl, { headers: { authorization: 'Bearer the-apps-own' } });
      expect(open.status).toBe(200);
      // A public port passes the app's own credentials through untouched.
      expect(open.body).toBe('auth=Bearer the-apps-own cookie=');
    } finally {
      await t.close();
    }
  });

  it('closes forwarded WebSockets when the server shuts down', async () => {
    const t = await startTestServer({ database: pglite });
    let closedServer = false;
    try {
      await enableEnvironments(t.client);
      const env = await t.client.environments.create({ name: 'proxy-close', provider: 'fake', config: {} });
      const sandbox = await t.client.sandboxes.create({ environmentId: env.id });
      const opened = await t.client.sandboxes.ports.open(sandbox.id, { port: targetPort });
      const cookie = String(
        (await portRequest((await t.client.sandboxes.ports.url(sandbox.id, targetPort)).url)).headers['set-cookie'],
      ).split(';')[0]!;
      const socket = new WebSocket(`${opened.baseUrl.replace(/^http/, 'ws')}`, { lookup: loopbackLookup, headers: { cookie } });
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
      });
      const reply = new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))));
      socket.send('hi');
      expect(await reply).toBe('echo:hi');
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await t.close();
      closedServer = true;
      await closed;
    } finally {
      if (!closedServer) await t.close();
    }
  });
});
