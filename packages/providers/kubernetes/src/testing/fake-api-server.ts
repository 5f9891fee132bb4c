import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { FakeCluster, type KubeObject } from './fake-cluster.ts';
import { serveExec } from './fake-exec.ts';
import { FakeNode } from './fake-node.ts';
import { selfSignedCertificate } from './tls.ts';

const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;

export interface FakeKubernetesOptions {
  /** Serve the agent-sandbox CRD (`agents.x-k8s.io/v1alpha1` Sandbox). Default false. */
  agentSandbox?: boolean | undefined;
  /** The exec subprotocols offered, in preference order. Default v5 then v4. */
  execProtocols?: ReadonlyArray<(typeof EXEC_PROTOCOLS)[number]> | undefined;
}

/** One call the fake received, as `METHOD /path?query`. */
export interface FakeCall {
  method: string;
  path: string;
}

export interface FakeKubernetes {
  /** A kubeconfig (YAML) naming the fake: its CA, its URL and its bearer token. */
  readonly kubeconfig: string;
  readonly url: string;
  readonly namespace: string;
  readonly cluster: FakeCluster;
  /** Every call made, in order. */
  readonly calls: FakeCall[];
  /** Every object created through the API, as the client sent it. */
  readonly created: KubeObject[];
  /** Calls and frames the fake does not implement: a test asserts this stays empty. */
  readonly unhandled: string[];
  /** Which exec subprotocol each exec session negotiated. */
  readonly execProtocolsUsed: string[];
  /** Deletes a pod or a Sandbox behind the provider's back, as `kubectl delete` would. */
  deleteBehindTheBack(kind: 'Pod' | 'Sandbox', name: string): Promise<void>;
  close(): Promise<void>;
}

const RESOURCES: Record<string, { kind: string; apiVersion: string; crd?: true }> = {
  '/api/v1/pods': { kind: 'Pod', apiVersion: 'v1' },
  '/apis/networking.k8s.io/v1/networkpolicies': { kind: 'NetworkPolicy', apiVersion: 'networking.k8s.io/v1' },
  '/apis/batch/v1/jobs': { kind: 'Job', apiVersion: 'batch/v1' },
  '/apis/agents.x-k8s.io/v1alpha1/sandboxes': { kind: 'Sandbox', apiVersion: 'agents.x-k8s.io/v1alpha1', crd: true },
};
const OBJECT_PATH = /^\/(api\/v1|apis\/[a-z0-9.-]+\/[a-z0-9]+)\/namespaces\/([a-z0-9-]+)\/([a-z]+)(?:\/([a-z0-9.-]+))?(?:\/(exec))?$/;

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function parseSelector(raw: string | null): Record<string, string> | null {
  if (!raw) return {};
  const out: Record<string, string> = {};
  for (const part of raw.split(',')) {
    const match = /^([A-Za-z0-9./_-]+)=([A-Za-z0-9._-]*)$/.exec(part);
    if (!match) return null;
    out[match[1] as string] = match[2] as string;
  }
  return out;
}

async function body(request: IncomingMessage): Promise<KubeObject> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as KubeObject;
}

/**
 * A fake Kubernetes API server for exactly the calls the provider makes, on the real wire: HTTPS
 * with a self-signed certificate and a bearer token, REST JSON for pods, network policies, Jobs
 * and (optionally) agent-sandbox Sandboxes, API discovery, and the pods/exec WebSocket
 * subprotocols. Pods are docker containers without a network. Anything else is recorded in
 * `unhandled` and answered 501, so a test that strays fails loudly.
 */
export async function startFakeKubernetes(options: FakeKubernetesOptions = {}): Promise<FakeKubernetes> {
  const { cert, key } = await selfSignedCertificate();
  const token = randomBytes(24).toString('hex');
  const serverId = randomBytes(6).toString('hex');
  const namespace = 'sandcast-test';
  const calls: FakeCall[] = [];
  const created: KubeObject[] = [];
  const unhandled: string[] = [];
  const execProtocolsUsed: string[] = [];
  const offered = options.execProtocols ?? EXEC_PROTOCOLS;
  const node = new FakeNode(serverId);
  const cluster = new FakeCluster(node, (message) => unhandled.push(message));

  const send = (response: ServerResponse, code: number, payload: unknown) => {
    response.writeHead(code, { 'content-type': 'application/json' });
    response.end(JSON.stringify(payload));
  };

  /** A watch on one object by name: its current state as ADDED, then every change, as JSON lines. */
  const watch = (response: ServerResponse, kind: string, ns: string, params: URLSearchParams) => {
    const field = /^metadata\.name=([a-z0-9.-]+)$/.exec(params.get('fieldSelector') ?? '');
    const extra = [...params.keys()].filter((k) => k !== 'watch' && k !== 'fieldSelector');
    if (!field || extra.length > 0) {
      unhandled.push(`WATCH ${kind} ${params}`);
      return send(response, 501, status(501, 'NotImplemented', 'only watches of one object by metadata.name are served'));
    }
    const name = field[1] as string;
    response.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const write = (type: string, object: KubeObject) => response.write(`${JSON.stringify({ type, object })}\n`);
    const current = cluster.get(kind, ns, name);
    if (current) write('ADDED', current);
    const unsubscribe = cluster.subscribe((type, object) => {
      if (object.kind === kind && object.metadata.namespace === ns && object.metadata.name === name) write(type, object);
    });
    response.on('close', unsubscribe);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'https://fake');
    const method = request.method ?? 'GET';
    calls.push({ method, path: `${url.pathname}${url.search}` });
    if (request.headers.authorization !== `Bearer ${token}`) return send(response, 401, status(401, 'Unauthorized', 'Unauthorized'));
    if (method === 'GET' && url.pathname === '/version') {
      return send(response, 200, { major: '1', minor: '31', gitVersion: 'v1.31.0-sandcast-fake', platform: 'linux/amd64' });
    }
    if (method === 'GET' && url.pathname === '/apis') {
      const groups = [
        {
          name: 'batch',
          versions: [{ groupVersion: 'batch/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'batch/v1', version: 'v1' },
        },
        {
          name: 'networking.k8s.io',
          versions: [{ groupVersion: 'networking.k8s.io/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'networking.k8s.io/v1', version: 'v1' },
        },
      ];
      if (options.agentSandbox) {
        const v = { groupVersion: 'agents.x-k8s.io/v1alpha1', version: 'v1alpha1' };
        groups.push({ name: 'agents.x-k8s.io', versions: [v], preferredVersion: v });
      }
      return send(response, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups });
    }
    const match = OBJECT_PATH.exec(url.pathname);
    const resource = match ? RESOURCES[`/${match[1]}/${match[3]}`] : undefined;
    if (!match || !resource || match[5] || (resource.crd && !options.agentSandbox)) {
      unhandled.push(`${method} ${url.pathname}${url.search}`);
      return send(response, 501, status(501, 'NotImplemented', `the fake API server does not serve ${method} ${url.pathname}`));
    }
    const ns = match[2] as string;
    const name = match[4];
    const { kind, apiVersion } = resource;
    if (!name && method === 'POST') {
      const object = await body(request);
      created.push(structuredClone(object));
      if (object.kind !== kind || object.apiVersion !== apiVersion || !object.metadata?.name) {
        return send(response, 400, status(400, 'BadRequest', `expected a ${apiVersion} ${kind} with a name`));
      }
      const stored = cluster.add(kind, ns, object);
      if (!stored) return send(response, 409, status(409, 'AlreadyExists', `${kind} "${object.metadata.name}" already exists`));
      return send(response, 201, stored);
    }
    if (!name && method === 'GET') {
      if (url.searchParams.get('watch') === 'true') return watch(response, kind, ns, url.searchParams);
      const selector = parseSelector(url.searchParams.get('labelSelector'));
      if (!selector || url.searchParams.has('fieldSelector') || url.searchParams.has('watch')) {
        unhandled.push(`${method} ${url.pathname}${url.search}`);
        return send(response, 501, status(501, 'NotImplemented', 'only equality label selectors are served'));
      }
      return send(response, 200, {
        kind: `${kind}List`,
        apiVersion,
        metadata: { resourceVersion: '1' },
        items: cluster.list(kind, ns, selector),
      });
    }
    if (name && method === 'GET') {
      const object = cluster.get(kind, ns, name);
      return object ? send(response, 200, object) : send(response, 404, status(404, 'NotFound', `${kind} "${name}" not found`));
    }
    if (name && method === 'DELETE') {
      const removed = await cluster.remove(kind, ns, name);
      return removed ? send(response, 200, removed) : send(response, 404, status(404, 'NotFound', `${kind} "${name}" not found`));
    }
    unhandled.push(`${method} ${url.pathname}${url.search}`);
    return send(response, 501, status(501, 'NotImplemented', `the fake API server does not serve ${method} on ${kind}`));
  };

  const server: Server = createServer({ cert, key }, (request, response) => {
    handle(request, response).catch((error: unknown) => {
      unhandled.push(`error serving ${request.method} ${request.url}: ${(error as Error).message}`);
      if (!response.headersSent) send(response, 500, status(500, 'InternalError', (error as Error).message));
    });
  });

  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => offered.find((p) => protocols.has(p)) ?? false,
  });
  const refuse = (socket: Socket, code: number, message: string) => {
    const payload = JSON.stringify(status(code, code === 404 ? 'NotFound' : 'BadRequest', message));
    socket.end(
      `HTTP/1.1 ${code} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
    );
  };
  server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'https://fake');
      calls.push({ method: 'UPGRADE', path: `${url.pathname}${url.search}` });
      if (request.headers.authorization !== `Bearer ${token}`) return refuse(socket, 401, 'Unauthorized');
      const match = OBJECT_PATH.exec(url.pathname);
      if (match?.[3] !== 'pods' || !match[4] || match[5] !== 'exec') {
        unhandled.push(`UPGRADE ${url.pathname}`);
        return refuse(socket, 400, 'only pods/exec upgrades are served');
      }
      const ns = match[2] as string;
      const pod = match[4];
      if (!cluster.get('Pod', ns, pod)) return refuse(socket, 404, `pods "${pod}" not found`);
      const container = await cluster.runningContainer(ns, pod);
      if (!container) return refuse(socket, 400, `container not found ("${pod}"): pod is not running`);
      const flag = (name: string) => url.searchParams.get(name) === 'true';
      const query = {
        command: url.searchParams.getAll('command'),
        stdin: flag('stdin'),
        stdout: flag('stdout'),
        stderr: flag('stderr'),
        tty: flag('tty'),
      };
      if (query.command.length === 0) return refuse(socket, 400, 'you must specify at least one command for the container');
      wss.handleUpgrade(request, socket, head, (ws) => {
        execProtocolsUsed.push(ws.protocol);
        serveExec(node.docker, container, query, ws, (problem) => unhandled.push(problem)).catch((error: unknown) => {
          unhandled.push(`exec failed in the fake: ${(error as Error).message}`);
          ws.close(1011);
        });
      });
    })();
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: fake',
    '  cluster:',
    `    server: ${url}`,
    `    certificate-authority-data: ${Buffer.from(cert).toString('base64')}`,
    'users:',
    '- name: sandcast',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: fake',
    '  context: {cluster: fake, user: sandcast, namespace: sandcast-test}',
    'current-context: fake',
    '',
  ].join('\n');

  return {
    kubeconfig,
    url,
    namespace,
    cluster,
    calls,
    created,
    unhandled,
    execProtocolsUsed,
    deleteBehindTheBack: async (kind, name) => {
      await cluster.remove(kind, namespace, name);
    },
    close: async () => {
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const object of [...cluster.objects.values()])
        await cluster.remove(object.kind, object.metadata.namespace ?? '', object.metadata.name);
      await node.removeAll();
    },
  };
}
