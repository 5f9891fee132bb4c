import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { testDatabases } from '@sandcast/db/testing';
import { loadConfig, startServer } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import WebSocket from 'ws';
import { enableEnvironments, type TestServer } from '../integration/support/harness.ts';
import { attack, startHostileServer } from './support/attack.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

interface RawAnswer {
  status: number;
  body: { error?: { code: string; message: string } } & Record<string, unknown>;
}

/** A raw HTTP/1.1 request: fetch() will not let a caller choose the Host header, an attacker's browser does. */
function raw(
  baseUrl: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: options.method ?? 'GET', path: options.path, headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: RawAnswer['body'] = {};
          try {
            body = JSON.parse(text);
          } catch {
            body = { text };
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** Opens a WebSocket and reports the HTTP status of a refused upgrade, or 101 when it opened. */
function upgradeStatus(url: string, headers: { origin?: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, headers.origin ? { origin: headers.origin } : {});
    socket.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      socket.terminate();
    });
    socket.on('open', () => {
      resolve(101);
      socket.close();
    });
    socket.on('error', reject);
  });
}

describe('hostile: DNS rebinding against a local_trusted server (finding 4)', () => {
  let t: TestServer;
  let port: string;
  beforeAll(async () => {
    t = await startHostileServer({ database: pglite });
    await enableEnvironments(t.client);
    port = new URL(t.url).port;
  });
  afterAll(async () => {
    await t?.close();
  });

  attack('POST /api/keys with Host: attacker.example and a matching Origin is refused and creates no key', async () => {
    const answer = await raw(t.url, {
      method: 'POST',
      path: '/api/keys',
      headers: { host: `attacker.example:${port}`, origin: `http://attacker.example:${port}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'rebound', role: 'admin' }),
    });
    expect(answer.status).toBe(421);
    expect(answer.body.error?.code).toBe('host_not_allowed');
    expect(answer.body.error?.message).toMatch(/127\.0\.0\.1/);
    expect(answer.body.secret).toBeUndefined();
    expect(await t.client.keys.list()).toEqual([]);
  });

  attack('a rebound GET of instance settings is refused too', async () => {
    const answer = await raw(t.url, { path: '/api/instance/settings', headers: { host: `rebind.attacker.example:${port}` } });
    expect(answer.status).toBe(421);
  });

  attack('a loopback Host with a foreign Origin cannot change state', async () => {
    const answer = await raw(t.url, {
      method: 'POST',
      path: '/api/keys',
      headers: { host: `127.0.0.1:${port}`, origin: 'https://attacker.example', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'csrf', role: 'admin' }),
    });
    expect(answer.status).toBe(403);
    expect(answer.body.error?.code).toBe('forbidden');
    expect(answer.body.error?.message).toMatch(/Origin/);
    const nullOrigin = await raw(t.url, {
      method: 'PATCH',
      path: '/api/instance/settings',
      headers: { host: `localhost:${port}`, origin: 'null', 'content-type': 'application/json' },
      body: JSON.stringify({ experimental: { enableEnvironments: false } }),
    });
    expect(nullOrigin.status).toBe(403);
    expect(await t.client.keys.list()).toEqual([]);
    expect((await t.client.settings.get()).experimental.enableEnvironments).toBe(true);
  });

  attack('a terminal WebSocket upgrade with a foreign Origin is refused before the socket opens', async () => {
    const ws = `ws://127.0.0.1:${port}/api/environment-custom-image-setup-sessions/setup_x/terminal/ws?terminalSessionId=term_x`;
    expect(await upgradeStatus(ws, { origin: 'https://attacker.example' })).toBe(403);
    // The UI's own origin (and a client that sends none) still reach the socket.
    expect(await upgradeStatus(ws, { origin: `http://127.0.0.1:${port}` })).toBe(101);
    expect(await upgradeStatus(ws, {})).toBe(101);
  });

  attack('the UI (same origin, any loopback name) and the CLI (no Origin) keep working', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `127.0.0.2:${port}`]) {
      const answer = await raw(t.url, {
        method: 'POST',
        path: '/api/keys',
        headers: { host, origin: `http://${host}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `ui ${host}`, role: 'agent' }),
      });
      expect(answer.status, host).toBe(201);
    }
    const cli = await raw(t.url, {
      method: 'POST',
      path: '/api/keys',
      headers: { host: `127.0.0.1:${port}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cli', role: 'agent' }),
    });
    expect(cli.status).toBe(201);
    // Sandbox ports are served on *.sandboxes.localhost by the port proxy, never by the API (no such
    // sandbox port here: 404, and no API answer); and such a page is sandbox content, not the operator.
    const sandboxHost = `8080-sbx1.sandboxes.localhost:${port}`;
    const onPortHost = await raw(t.url, { path: '/api/health', headers: { host: sandboxHost } });
    expect(onPortHost.status).toBe(404);
    expect(onPortHost.body).not.toHaveProperty('version');
    const fromSandboxPage = await raw(t.url, {
      method: 'POST',
      path: '/api/keys',
      headers: { host: `127.0.0.1:${port}`, origin: `http://${sandboxHost}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'from a sandbox page', role: 'admin' }),
    });
    expect(fromSandboxPage.status).toBe(403);
    // A name that only looks like loopback is not.
    for (const host of [`localhost.attacker.example:${port}`, `127.0.0.1.nip.io:${port}`, `[::ffff:7f00:1]x:${port}`]) {
      expect((await raw(t.url, { path: '/api/health', headers: { host } })).status, host).toBe(421);
    }
  });
});

describe('hostile: Host pinning in authenticated mode (finding 4)', () => {
  attack(
    'with SANDCAST_ALLOWED_HOSTS set, a foreign Host is refused before the key is even checked; listed names and loopback work',
    async () => {
      const t = await startHostileServer({
        database: pglite,
        mode: 'authenticated',
        env: { SANDCAST_ALLOWED_HOSTS: 'sandcast.example.com', SANDCAST_PUBLIC_URL: 'https://sandcast.example.com' },
      });
      try {
        const port = new URL(t.url).port;
        const foreign = await raw(t.url, { path: '/api/health', headers: { host: `attacker.example:${port}` } });
        expect(foreign.status).toBe(421);
        expect(foreign.body.error?.message).toMatch(/SANDCAST_ALLOWED_HOSTS/);
        expect((await raw(t.url, { path: '/api/health', headers: { host: 'sandcast.example.com' } })).status).toBe(200);
        expect((await raw(t.url, { path: '/api/health', headers: { host: `127.0.0.1:${port}` } })).status).toBe(200);
        // A page elsewhere cannot log in to the UI through the listed name.
        const login = await raw(t.url, {
          method: 'POST',
          path: '/api/auth/session',
          headers: { host: 'sandcast.example.com', origin: 'https://attacker.example', 'content-type': 'application/json' },
          body: JSON.stringify({ apiKey: 'whatever' }),
        });
        expect(login.status).toBe(403);
      } finally {
        await t.close();
      }
    },
  );
});

describe('hostile: the data directory is private (finding 5)', () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const dir of roots) await rm(dir, { recursive: true, force: true });
  });

  async function groupOrOtherAccessible(dir: string): Promise<string[]> {
    const open: string[] = [];
    const walk = async (p: string) => {
      const s = await stat(p);
      if ((s.mode & 0o077) !== 0) open.push(`${path.relative(dir, p) || '.'} ${(s.mode & 0o777).toString(8)}`);
      if (s.isDirectory()) for (const entry of await readdir(p)) await walk(path.join(p, entry));
    };
    await walk(dir);
    return open;
  }

  const quiet = new Writable({ write: (_c, _e, cb) => cb() });

  async function startOn(dataDir: string) {
    return startServer(
      loadConfig({ SANDCAST_PORT: '0', SANDCAST_DATA_DIR: dataDir, SANDCAST_SSH_PORT: 'off', SANDCAST_LOG_LEVEL: 'silent' }),
      { providers: [], logStream: quiet },
    );
  }

  attack('a fresh install: nothing under the data dir, PGlite WAL included, is readable by group or others', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'sandcast-hostile-datadir-'));
    roots.push(root);
    await chmod(root, 0o755);
    const dataDir = path.join(root, 'data');
    const server = await startOn(dataDir);
    try {
      // Files the database creates while it runs (new relations, WAL) are private too.
      for (let i = 0; i < 50; i++) await server.store.repos.settings.put({ experimental: { enableEnvironments: i % 2 === 0 } });
      await server.store.repos.activity.list({ limit: 1 });
      const wal = path.join(dataDir, 'db', 'pg_wal');
      expect((await readdir(wal)).length).toBeGreaterThan(0);
      expect(await groupOrOtherAccessible(dataDir)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  attack('an existing 0755/0666 install is tightened on start', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'sandcast-hostile-datadir-'));
    roots.push(root);
    const dataDir = path.join(root, 'data');
    // A first start makes a real database; then loosen everything as an older version left it.
    await (await startOn(dataDir)).close();
    await mkdir(path.join(dataDir, 'providers', 'local'), { recursive: true });
    await writeFile(path.join(dataDir, 'providers', 'local', 'state.json'), '{}');
    const loosen = async (p: string) => {
      const s = await stat(p);
      await chmod(p, s.isDirectory() ? 0o755 : 0o666);
      if (s.isDirectory()) for (const entry of await readdir(p)) await loosen(path.join(p, entry));
    };
    await loosen(dataDir);
    expect((await groupOrOtherAccessible(dataDir)).length).toBeGreaterThan(10);
    const server = await startOn(dataDir);
    try {
      // Provider state keeps the modes its provider gave it (image layers must); the 0700 data dir above it keeps others out.
      expect((await groupOrOtherAccessible(dataDir)).filter((p) => !p.startsWith('providers'))).toEqual([]);
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
      // Owner bits are kept: the server still reads and writes its database.
      expect((await stat(path.join(dataDir, 'db'))).mode & 0o700).toBe(0o700);
      await server.store.repos.settings.put({ experimental: { enableEnvironments: true } });
    } finally {
      await server.close();
    }
  });
});

describe('hostile: bad bytes, huge arguments and escaping working directories (findings 10, 11, 12)', () => {
  let t: TestServer;
  let sandboxId: string;
  const json = { 'content-type': 'application/json' };
  beforeAll(async () => {
    t = await startHostileServer({ database: pglite });
    await enableEnvironments(t.client);
    const env = await t.client.environments.create({ name: 'edge', provider: 'fake', config: {} });
    sandboxId = (await t.client.sandboxes.create({ environmentId: env.id })).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const expect400 = (answer: { status: number; body: unknown }, pattern: RegExp) => {
    expect(answer.status).toBe(400);
    expect((answer.body as RawAnswer['body']).error?.message).toMatch(pattern);
  };

  attack('NUL in a path parameter is a 400', async () => {
    expect400(await t.fetch('/api/environments/env%00x'), /NUL/);
    expect400(await t.fetch('/api/sandboxes/%00', { method: 'DELETE' }), /NUL/);
  });

  attack('NUL and invalid UTF-8 in a query string are a 400, and the query never reaches the log', async () => {
    expect400(await t.fetch('/api/activity?action=%00secret-query-value'), /NUL/);
    expect400(await t.fetch('/api/activity?action=%ED%A0%80secret-query-value'), /UTF-8/);
    expect400(await t.fetch('/api/activity?action=%FFsecret-query-value'), /UTF-8/);
    expect400(await t.fetch('/api/environments/%ED%A0%80'), /UTF-8/);
    expect((await t.fetch('/api/activity?action=plain-secret-query-value')).status).toBe(200);
    expect(t.logs.join('\n')).not.toContain('secret-query-value');
  });

  attack('NUL and lone surrogates in JSON bodies are a 400 naming the field', async () => {
    const bodies = [
      '{"name":"a\\u0000b","role":"agent"}',
      '{"name":"a\\ud800b","role":"agent"}',
      '{"name":"ok","role":"agent","\\udc00":1}',
    ];
    for (const body of bodies) {
      const answer = await t.fetch('/api/keys', { method: 'POST', headers: json, body });
      expect(answer.status, body).toBe(400);
      expect((answer.body as RawAnswer['body']).error?.message, body).toMatch(/NUL|surrogate/);
    }
    const env = await t.fetch('/api/environments', {
      method: 'POST',
      headers: json,
      body: '{"name":"nul","provider":"fake","config":{"image":"a\\u0000b"}}',
    });
    expect400(env, /config\.image/);
    const deep = await t.fetch('/api/keys', { method: 'POST', headers: json, body: `${'['.repeat(100_000)}${']'.repeat(100_000)}` });
    expect(deep.status).toBe(400);
    expect(await t.client.keys.list()).toEqual([]);
  });

  attack('a 900 KB argument or 15,000 environment entries are a 400 before any provider call', async () => {
    const huge = await t.fetch(`/api/sandboxes/${sandboxId}/exec`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ command: ['echo', 'x'.repeat(900_000)] }),
    });
    expect400(huge, /argument/);
    const env = Object.fromEntries(Array.from({ length: 15_000 }, (_, i) => [`V${i}`, 'x']));
    const many = await t.fetch(`/api/sandboxes/${sandboxId}/exec`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ command: ['true'], env }),
    });
    expect400(many, /environment/);
    const nul = await t.fetch(`/api/sandboxes/${sandboxId}/exec`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ command: ['echo', 'a\u0000b'] }),
    });
    expect400(nul, /NUL/);
    // The sandbox still runs ordinary commands.
    expect(await t.client.sandboxes.exec(sandboxId, { command: ['echo', 'still here'] })).toMatchObject({ exitCode: 0 });
  });

  attack('an exec cwd or an environment workdir with .. is refused', async () => {
    const climbing = await t.fetch(`/api/sandboxes/${sandboxId}/exec`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ command: ['pwd'], cwd: '/../../../../tmp/x' }),
    });
    expect400(climbing, /\.\./);
    const env = await t.fetch('/api/environments', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'escape', provider: 'local', config: { workdir: '/workspace/../../etc' } }),
    });
    expect400(env, /workdir: .*\.\./);
  });
});

describe('hostile: network "host" gives sandbox code the admin API (finding 8)', () => {
  const json = { 'content-type': 'application/json' };
  const hostConfig = { network: 'host' };

  attack('local_trusted refuses network host on create and on update, even with the setting on', async () => {
    const t = await startHostileServer({ database: pglite });
    try {
      await t.client.settings.update({ experimental: { enableEnvironments: true }, security: { allowHostNetwork: true } });
      for (const provider of ['local', 'docker']) {
        const created = await t.fetch('/api/environments', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ name: `host-${provider}`, provider, config: { ...hostConfig, image: 'debian:bookworm' } }),
        });
        expect(created.status, provider).toBe(400);
        expect(JSON.stringify(created.body)).toMatch(/config\.network.*local_trusted/);
      }
      const env = await t.client.environments.create({ name: 'plain', provider: 'local', config: {} });
      const updated = await t.fetch(`/api/environments/${env.id}`, {
        method: 'PATCH',
        headers: json,
        body: JSON.stringify({ config: hostConfig }),
      });
      expect(updated.status).toBe(400);
      expect((await t.client.environments.revisions(env.id)).length).toBe(1);
      // Docker's bridge reaches the internet, not the host's loopback: allowed.
      expect(
        (
          await t.client.environments.create({
            name: 'bridged',
            provider: 'docker',
            config: { network: 'bridge', image: 'debian:bookworm' },
          })
        ).config,
      ).toMatchObject({
        network: 'bridge',
      });
    } finally {
      await t.close();
    }
  });

  attack('an environment stored with network host before the policy cannot boot a sandbox or a setup', async () => {
    const t = await startHostileServer({ database: pglite });
    try {
      await enableEnvironments(t.client);
      const old = await t.server.store.repos.environments.insert({ name: 'legacy', provider: 'local', config: { network: 'host' } });
      const sandbox = await t.fetch('/api/sandboxes', { method: 'POST', headers: json, body: JSON.stringify({ environmentId: old.id }) });
      expect(sandbox.status).toBe(403);
      expect(JSON.stringify(sandbox.body)).toMatch(/network/);
      const setup = await t.fetch(`/api/environments/${old.id}/custom-image-setup-sessions`, { method: 'POST', headers: json, body: '{}' });
      expect(setup.status).toBe(403);
      expect(await t.client.sandboxes.list()).toEqual([]);
    } finally {
      await t.close();
    }
  });

  attack('authenticated mode needs the allowHostNetwork setting, off by default', async () => {
    const t = await startHostileServer({ database: pglite, mode: 'authenticated' });
    try {
      const admin = t.clientWithKey(
        (await import('node:fs/promises').then((fs) => fs.readFile(path.join(t.dataDir, 'admin-api-key'), 'utf8'))).trim(),
      );
      await admin.settings.update({ experimental: { enableEnvironments: true } });
      const refused = await admin.environments.create({ name: 'host', provider: 'local', config: hostConfig }).catch((e: Error) => e);
      expect(String(refused)).toMatch(/Allow host network/);
      await admin.settings.update({ security: { allowHostNetwork: true } });
      const env = await admin.environments.create({ name: 'host', provider: 'local', config: hostConfig });
      expect(env.config).toMatchObject({ network: 'host' });
      // Turned off again: the stored revision no longer boots.
      await admin.settings.update({ security: { allowHostNetwork: false } });
      const sandbox = await admin.sandboxes.create({ environmentId: env.id }).catch((e: Error) => e);
      expect(String(sandbox)).toMatch(/cannot boot here/);
    } finally {
      await t.close();
    }
  });
});
