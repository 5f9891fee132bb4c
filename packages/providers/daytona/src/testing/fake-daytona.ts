import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { docker, dockerOk, FAKE_DEFAULT_IMAGE } from './docker-cli.ts';
import { type FakeSandbox, HttpFailure, readBody, sendJson } from './fake-http.ts';
import { type FakeSsh, startFakeSsh } from './fake-ssh.ts';
import { createToolbox, type Toolbox } from './fake-toolbox.ts';

interface FakeSnapshot {
  id: string;
  name: string;
  image: string;
  sourceSandboxId: string | null;
  createdAt: string;
}

export interface FakeDaytona {
  /** The API URL a connection names (…/api). */
  apiUrl: string;
  apiKey: string;
  /** Every request the fake answered, `METHOD /path`. */
  readonly requests: string[];
  /** Requests the fake does not implement; a test asserts this stays empty. */
  readonly unhandled: string[];
  readonly sandboxes: ReadonlyMap<string, FakeSandbox>;
  /** Removes a sandbox behind the provider's back, as an outside delete would. */
  vanish(sandboxId: string): Promise<void>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
const DEFAULT_SNAPSHOT = 'daytonaio/sandbox:fake';
const FAKE_LABEL = 'sandcast.daytona-fake';

const readJson = async (req: IncomingMessage): Promise<Json> => {
  const body = await readBody(req);
  return body.length ? (JSON.parse(body.toString('utf8')) as Json) : {};
};

/**
 * A local stand-in for Daytona's HTTP API, built from the request paths and models of the
 * SDK's generated clients (`@daytona/api-client`, `@daytona/toolbox-api-client`): the control
 * API under `/api`, each sandbox's toolbox under `/toolbox/<id>`, and an SSH endpoint for SSH
 * access tokens. It implements exactly what Sandcast's Daytona provider calls; anything else is
 * answered 501 and recorded in `unhandled`. Sandboxes are Docker containers without a network.
 */
export async function startFakeDaytona(options: { apiKey?: string; defaultImage?: string } = {}): Promise<FakeDaytona> {
  const apiKey = options.apiKey ?? `fake-key-${randomBytes(12).toString('hex')}`;
  const tag = randomBytes(4).toString('hex');
  const sandboxes = new Map<string, FakeSandbox>();
  const snapshots = new Map<string, FakeSnapshot>();
  snapshots.set(DEFAULT_SNAPSHOT, {
    id: randomUUID(),
    name: DEFAULT_SNAPSHOT,
    image: options.defaultImage ?? FAKE_DEFAULT_IMAGE,
    sourceSandboxId: null,
    createdAt: new Date().toISOString(),
  });
  const requests: string[] = [];
  const unhandled: string[] = [];
  let origin = '';

  const dto = (s: FakeSandbox): Json => ({
    id: s.id,
    organizationId: 'org-fake',
    name: s.id,
    snapshot: s.snapshot,
    user: 'root',
    env: s.env,
    labels: s.labels,
    public: false,
    networkBlockAll: true,
    target: 'fake',
    cpu: 1,
    gpu: 0,
    memory: 1,
    disk: 3,
    state: s.state,
    desiredState: s.state,
    autoStopInterval: s.autoStopInterval,
    autoArchiveInterval: s.autoArchiveInterval,
    autoDeleteInterval: s.autoDeleteInterval,
    createdAt: s.createdAt,
    updatedAt: new Date().toISOString(),
    toolboxProxyUrl: `${origin}/toolbox`,
  });
  const snapshotDto = (s: FakeSnapshot): Json => ({
    id: s.id,
    organizationId: 'org-fake',
    general: false,
    name: s.name,
    imageName: s.image,
    state: 'active',
    size: 1,
    entrypoint: null,
    cpu: 1,
    gpu: 0,
    mem: 1,
    disk: 3,
    errorReason: null,
    createdAt: s.createdAt,
    updatedAt: s.createdAt,
    lastUsedAt: null,
    sourceSandboxId: s.sourceSandboxId,
  });

  const live = (id: string): FakeSandbox => {
    const sandbox = sandboxes.get(id);
    if (!sandbox || sandbox.state === 'destroyed') throw new HttpFailure(404, `Sandbox with ID or name ${id} not found`);
    return sandbox;
  };
  const snapshotByIdOrName = (key: string): FakeSnapshot => {
    const found = snapshots.get(key) ?? [...snapshots.values()].find((s) => s.id === key);
    if (!found) throw new HttpFailure(404, `Snapshot ${key} not found`);
    return found;
  };

  const tokens = new Map<string, { container: string; expiresAt: number }>();
  const ssh: FakeSsh = await startFakeSsh({
    containerOf: (token) => {
      const access = tokens.get(token);
      return access && access.expiresAt > Date.now() ? access.container : null;
    },
  });
  const toolbox: Toolbox = createToolbox({ live });

  const api = async (method: string, parts: string[], url: URL, req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const [head, id, action] = parts;
    if (head === 'sandbox' && parts.length === 1 && method === 'POST') {
      const body = await readJson(req);
      const snapshotName = typeof body.snapshot === 'string' ? body.snapshot : DEFAULT_SNAPSHOT;
      const snapshot = snapshots.get(snapshotName);
      if (!snapshot) throw new HttpFailure(404, `Snapshot ${snapshotName} not found. Did you add it through the Daytona Dashboard?`);
      const sandboxId = randomUUID();
      const container = `daytona-fake-${tag}-${sandboxId.slice(0, 8)}`;
      const env = (body.env ?? {}) as Record<string, string>;
      await dockerOk([
        'run',
        '-d',
        '--init',
        '--network',
        'none',
        '--name',
        container,
        '--label',
        `${FAKE_LABEL}=${tag}`,
        ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
        '--entrypoint',
        'sleep',
        snapshot.image,
        'infinity',
      ]);
      const sandbox: FakeSandbox = {
        id: sandboxId,
        container,
        labels: (body.labels ?? {}) as Record<string, string>,
        env,
        snapshot: snapshotName,
        state: 'started',
        autoStopInterval: Number(body.autoStopInterval ?? 15),
        autoArchiveInterval: Number(body.autoArchiveInterval ?? 10080),
        autoDeleteInterval: Number(body.autoDeleteInterval ?? -1),
        createdAt: new Date().toISOString(),
      };
      sandboxes.set(sandboxId, sandbox);
      sendJson(res, 200, dto(sandbox));
      return true;
    }
    if (head === 'sandbox' && parts.length === 1 && method === 'GET') {
      const wanted = url.searchParams.get('labels');
      const labels = wanted ? (JSON.parse(wanted) as Record<string, string>) : {};
      const items = [...sandboxes.values()]
        .filter((s) => s.state !== 'destroyed')
        .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
      const limit = Number(url.searchParams.get('limit') ?? items.length);
      sendJson(res, 200, { items: items.slice(0, limit || items.length).map(dto), nextCursor: null });
      return true;
    }
    if (head === 'sandbox' && id && parts.length === 2 && method === 'GET') {
      sendJson(res, 200, dto(live(id)));
      return true;
    }
    if (head === 'sandbox' && id && parts.length === 2 && method === 'DELETE') {
      const sandbox = live(id);
      await docker(['rm', '-f', '-v', sandbox.container]);
      sandbox.state = 'destroyed';
      toolbox.forget(id);
      sendJson(res, 200, dto(sandbox));
      return true;
    }
    if (head === 'sandbox' && id && parts.length === 3 && method === 'POST') {
      const sandbox = live(id);
      if (action === 'stop') {
        if (sandbox.state === 'started') await dockerOk(['stop', '-t', '1', sandbox.container]);
        sandbox.state = 'stopped';
      } else if (action === 'start') {
        if (sandbox.state !== 'started') await dockerOk(['start', sandbox.container]);
        sandbox.state = 'started';
      } else if (action === 'archive') {
        if (sandbox.state !== 'stopped') throw new HttpFailure(400, 'Sandbox must be stopped before it is archived');
        sandbox.state = 'archived';
      } else if (action === 'snapshot') {
        const { name } = await readJson(req);
        if (typeof name !== 'string' || !name) throw new HttpFailure(400, 'name is required');
        if (snapshots.has(name)) throw new HttpFailure(409, `Snapshot ${name} already exists`);
        const image = `daytona-fake-snapshot-${tag}:${randomBytes(6).toString('hex')}`;
        await dockerOk(['commit', '--pause=false', sandbox.container, image]);
        snapshots.set(name, { id: randomUUID(), name, image, sourceSandboxId: id, createdAt: new Date().toISOString() });
      } else if (action === 'ssh-access') {
        const minutes = Number(url.searchParams.get('expiresInMinutes') ?? 60);
        const token = randomBytes(16).toString('hex');
        const expiresAt = Date.now() + minutes * 60_000;
        tokens.set(token, { container: sandbox.container, expiresAt });
        const now = new Date().toISOString();
        sendJson(res, 200, {
          id: randomUUID(),
          sandboxId: id,
          token,
          expiresAt: new Date(expiresAt).toISOString(),
          createdAt: now,
          updatedAt: now,
          sshCommand: `ssh ${token}@127.0.0.1 -p ${ssh.port}`,
        });
        return true;
      } else return false;
      sendJson(res, 200, dto(sandbox));
      return true;
    }
    if (head === 'snapshots' && id && parts.length === 2 && method === 'GET') {
      sendJson(res, 200, snapshotDto(snapshotByIdOrName(id)));
      return true;
    }
    if (head === 'snapshots' && id && parts.length === 2 && method === 'DELETE') {
      const snapshot = snapshotByIdOrName(id);
      snapshots.delete(snapshot.name);
      await docker(['rmi', '-f', snapshot.image]);
      res.writeHead(200).end();
      return true;
    }
    return false;
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const line = `${method} ${url.pathname}`;
    requests.push(line);
    void (async () => {
      if (req.headers.authorization !== `Bearer ${apiKey}`) {
        await readBody(req);
        sendJson(res, 401, { statusCode: 401, message: 'Invalid credentials', error: 'Unauthorized' });
        return;
      }
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      let handled = false;
      if (parts[0] === 'api') handled = await api(method, parts.slice(1), url, req, res);
      else if (parts[0] === 'toolbox' && parts[1]) handled = await toolbox.handle(method, parts[1], parts.slice(2), url, req, res);
      if (!handled) {
        unhandled.push(line);
        await readBody(req);
        sendJson(res, 501, { statusCode: 501, message: `the Daytona fake does not implement ${line}` });
      }
    })().catch((error: unknown) => {
      const status = error instanceof HttpFailure ? error.status : 500;
      if (!res.headersSent) sendJson(res, status, { statusCode: status, message: (error as Error).message });
      else res.destroy();
    });
  });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push(`WS ${url.pathname}`);
    const parts = url.pathname.split('/').filter(Boolean);
    if (
      req.headers.authorization !== `Bearer ${apiKey}` ||
      parts[0] !== 'toolbox' ||
      !parts[1] ||
      !toolbox.upgrade(parts[1], parts.slice(2), req, socket, head)
    ) {
      unhandled.push(`WS ${url.pathname}`);
      socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    apiUrl: `${origin}/api`,
    apiKey,
    requests,
    unhandled,
    sandboxes,
    async vanish(sandboxId) {
      const sandbox = sandboxes.get(sandboxId);
      if (!sandbox) return;
      await docker(['rm', '-f', '-v', sandbox.container]);
      sandboxes.delete(sandboxId);
    },
    async close() {
      toolbox.close();
      await ssh.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const left = (await docker(['ps', '-aq', '--filter', `label=${FAKE_LABEL}=${tag}`])).stdout.toString().split('\n').filter(Boolean);
      if (left.length) await docker(['rm', '-f', '-v', ...left]);
      const images = [...snapshots.values()].filter((s) => s.sourceSandboxId !== null).map((s) => s.image);
      if (images.length) await docker(['rmi', '-f', ...images]);
    },
  };
}
