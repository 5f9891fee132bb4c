import { readFile } from 'node:fs/promises';
import type { ExecBody, ExecResultBody } from '@sandcast/contracts';
import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { TestServer } from './support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';
import { chunkReader, loopbackLookup, portRequest, portResponse } from './support/port-client.ts';

const runnable = requireForSuite('ports-local', await localSkipReason());
const SERVER_SCRIPT = await readFile(new URL('./support/port-echo-server.mjs', import.meta.url), 'utf8');

/** Runs a command in a sandbox or a setup sandbox. */
type Exec = (body: ExecBody) => Promise<ExecResultBody>;

/** Starts the echo server inside the sandbox (or setup sandbox) `exec` runs in, on `port`, and waits until it listens. */
async function startSandboxServer(exec: Exec, port: number): Promise<void> {
  await exec({ command: ['sh', '-c', 'printf %s "$1" > /tmp/port-echo-server.mjs', 'sh', SERVER_SCRIPT] });
  const started = await exec({
    command: ['sh', '-c', `nohup node /tmp/port-echo-server.mjs ${port} /tmp/ready-${port} >/tmp/server-${port}.log 2>&1 &`],
  });
  expect(started.exitCode).toBe(0);
  const ready = await exec({
    command: [
      'sh',
      '-c',
      `for i in $(seq 200); do [ -f /tmp/ready-${port} ] && exit 0; sleep 0.05; done; cat /tmp/server-${port}.log; exit 1`,
    ],
  });
  expect(ready.exitCode, ready.stdout + ready.stderr).toBe(0);
}

function openSocket(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  const socket = new WebSocket(url, { lookup: loopbackLookup, headers });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
  });
}

const nextMessage = (socket: WebSocket) => new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))));
const closed = (socket: WebSocket) =>
  new Promise<void>((resolve) => {
    if (socket.readyState === WebSocket.CLOSED) resolve();
    else socket.once('close', () => resolve());
  });

describe.skipIf(!runnable)(`sandbox ports on the local provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server } = useRealProviderServer((dataDir) => [createLocalProvider({ dataDir })]);
  let t: TestServer;
  let environmentId: string;
  beforeAll(async () => {
    t = server();
    environmentId = (await t.client.environments.create({ name: 'ports-local', provider: 'local', config: {} })).id;
  });

  it('serves a server inside the sandbox through its URL: HTTP, a streamed answer, a WebSocket; closing ends access', async () => {
    const sandbox = await t.client.sandboxes.create({ environmentId });
    try {
      await startSandboxServer((body) => t.client.sandboxes.exec(sandbox.id, body), 8080);
      const opened = await t.client.sandboxes.ports.open(sandbox.id, { port: 8080 });
      expect(opened).toMatchObject({ port: 8080, visibility: 'private' });
      expect(await t.client.sandboxes.ports.list(sandbox.id)).toEqual([opened]);

      // Without its token, a private port refuses.
      const bare = await portRequest(opened.baseUrl);
      expect(bare.status).toBe(401);

      // The URL's token is traded for a host-only cookie, and the token leaves the address.
      const { url, expiresAt } = await t.client.sandboxes.ports.url(sandbox.id, 8080);
      expect(expiresAt).toBeTruthy();
      const exchanged = await portRequest(url);
      expect(exchanged.status).toBe(303);
      expect(exchanged.headers.location).toBe('/');
      const setCookie = String(exchanged.headers['set-cookie']);
      expect(setCookie).toMatch(/HttpOnly/);
      expect(setCookie).not.toMatch(/Domain=/i);
      const cookie = setCookie.split(';')[0]!;

      const hello = await portRequest(`${opened.baseUrl}hello?x=1`, { headers: { cookie: `${cookie}; theirs=1` } });
      expect(hello.status).toBe(200);
      expect(hello.body).toBe('hello from port 8080: GET /hello?x=1\n');
      // The sandbox never sees Sandcast's credential, only its own cookies.
      expect(hello.headers['x-seen-cookie']).toBe('theirs=1');

      // A streamed answer arrives in parts: the first before the server has finished.
      const streamed = chunkReader(await portResponse(`${opened.baseUrl}stream`, { cookie }));
      expect(await streamed.next()).toBe('first\n');
      expect((await portRequest(`${opened.baseUrl}release`, { headers: { cookie } })).body).toBe('released\n');
      expect(await streamed.next()).toBe('second\n');

      // A WebSocket upgrade, echoed by the server in the sandbox.
      const wsUrl = `${opened.baseUrl.replace(/^http/, 'ws')}socket`;
      await expect(openSocket(wsUrl)).rejects.toThrow(/401/);
      const socket = await openSocket(wsUrl, { cookie });
      const reply = nextMessage(socket);
      socket.send('ping');
      expect(await reply).toBe('echo:ping');

      // Closing the port ends the open WebSocket and every later request.
      await t.client.sandboxes.ports.close(sandbox.id, 8080);
      await closed(socket);
      expect((await portRequest(`${opened.baseUrl}hello`, { headers: { cookie } })).status).toBe(404);
      // Reopening does not bring old tokens back.
      await t.client.sandboxes.ports.open(sandbox.id, { port: 8080 });
      expect((await portRequest(`${opened.baseUrl}hello`, { headers: { cookie } })).status).toBe(401);
      expect((await portRequest(url)).status).toBe(401);
    } finally {
      await t.client.sandboxes.delete(sandbox.id).catch(() => undefined);
    }
  }, 120_000);

  it("keeps each sandbox's ports its own, and deleting the sandbox ends access at once", async () => {
    const a = await t.client.sandboxes.create({ environmentId });
    const b = await t.client.sandboxes.create({ environmentId });
    try {
      await startSandboxServer((body) => t.client.sandboxes.exec(a.id, body), 9000);
      const portA = await t.client.sandboxes.ports.open(a.id, { port: 9000 });
      const urlA = (await t.client.sandboxes.ports.url(a.id, 9000)).url;
      // B's name for the same port: not open there, and A's server is not reachable through it.
      const guessed = portA.baseUrl.replace(a.id.replace('_', '-'), b.id.replace('_', '-'));
      expect((await portRequest(guessed)).status).toBe(404);
      // B opening 9000 reaches B's own (empty) loopback, never A's server.
      await t.client.sandboxes.ports.open(b.id, { port: 9000 });
      const tokenB = new URL((await t.client.sandboxes.ports.url(b.id, 9000)).url).search;
      const viaB = await portRequest(`${guessed}hello${tokenB}`.replace('hello?', '?'));
      expect(viaB.status).toBe(303);
      const cookieB = String(viaB.headers['set-cookie']).split(';')[0]!;
      const answerB = await portRequest(guessed, { headers: { cookie: cookieB } });
      expect(answerB.status).toBe(502);
      expect(answerB.body).not.toContain('hello from port');
      // A's token does not open B's port.
      const tokenA = new URL(urlA).search;
      expect((await portRequest(`${guessed}${tokenA}`)).status).toBe(401);

      const cookieA = String((await portRequest(urlA)).headers['set-cookie']).split(';')[0]!;
      const socket = await openSocket(`${portA.baseUrl.replace(/^http/, 'ws')}socket`, { cookie: cookieA });
      await t.client.sandboxes.delete(a.id);
      await closed(socket);
      expect((await portRequest(portA.baseUrl, { headers: { cookie: cookieA } })).status).toBe(404);
    } finally {
      await t.client.sandboxes.delete(a.id).catch(() => undefined);
      await t.client.sandboxes.delete(b.id).catch(() => undefined);
    }
  }, 120_000);

  it('serves a server inside a setup sandbox through its URL; cancelling the setup ends access at once', async () => {
    const { session } = await t.client.customImages.startSetup(environmentId);
    try {
      await startSandboxServer((body) => t.client.customImages.exec(session.id, body), 8080);
      const opened = await t.client.customImages.ports.open(session.id, { port: 8080 });
      expect(new URL(opened.baseUrl).hostname).toMatch(/^8080-setup-[0-9a-f]{32}\.sandboxes\.localhost$/);
      expect((await portRequest(opened.baseUrl)).status).toBe(401);
      const cookie = String((await portRequest((await t.client.customImages.ports.url(session.id, 8080)).url)).headers['set-cookie']).split(
        ';',
      )[0]!;
      const hello = await portRequest(`${opened.baseUrl}hello`, { headers: { cookie } });
      expect(hello.status).toBe(200);
      expect(hello.body).toBe('hello from port 8080: GET /hello\n');
      const socket = await openSocket(`${opened.baseUrl.replace(/^http/, 'ws')}socket`, { cookie });
      const reply = nextMessage(socket);
      socket.send('ping');
      expect(await reply).toBe('echo:ping');

      await t.client.customImages.cancel(session.id);
      await closed(socket);
      expect((await portRequest(`${opened.baseUrl}hello`, { headers: { cookie } })).status).toBe(404);
    } finally {
      await t.client.customImages.cancel(session.id).catch(() => undefined);
    }
  }, 120_000);
});
