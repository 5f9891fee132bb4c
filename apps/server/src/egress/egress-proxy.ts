import { lookup } from 'node:dns/promises';
import { chmod, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { SandboxContainment } from '@sandcast/core';
import { ADDRESS_REFUSALS, addressRefusal, type IpAddress, type PrivateAllowances, parseIpLiteral } from './address-class.ts';
import { CLIENT_HELLO_MAX_BYTES, readClientHello } from './client-hello.ts';
import { hostPermitted, normalizeHost } from './host-match.ts';

/** Resolves a name to IP addresses (text). Injected in tests; by default the system resolver. */
export type EgressResolver = (host: string) => Promise<string[]>;

const systemResolver: EgressResolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** Why a request was allowed or refused: a closed set (activity details and metric labels). */
const EGRESS_REASONS = [
  'allowed',
  'network_denied',
  'not_allowlisted',
  'bad_request',
  'unresolvable',
  'sni_mismatch',
  'upstream_unreachable',
  ...ADDRESS_REFUSALS,
] as const;
export type EgressReason = (typeof EGRESS_REASONS)[number];

/** One decision of the proxy: what was asked for, never a path, a query or a body. */
export interface EgressDecision {
  allowed: boolean;
  /** The host as asked (normalised), or `-` when the request named none that parses. */
  host: string;
  port: number;
  method: 'CONNECT' | 'HTTP';
  reason: EgressReason;
}

export interface EgressProxyDeps {
  resolve?: EgressResolver | undefined;
  /** The instance's exceptions to the private-address refusal, read per request. */
  allowances: () => Promise<PrivateAllowances>;
  /** Awaited before the answer (or the tunnel) goes on, so a decision is recorded before it takes effect. */
  onDecision: (owner: string, decision: EgressDecision) => Promise<void> | void;
  /** Bytes a finished client connection moved: `sent` from the sandbox, `received` into it. */
  onBytes: (owner: string, sent: number, received: number) => void;
  /** How long the upstream connect and a tunnel's first TLS record may take. Default 10 s. */
  timeoutMs?: number | undefined;
}

/** One sandbox's proxy: a unix socket the relay in its network namespace connects to. */
export interface EgressListener {
  /** Bytes the connections still open moved so far (closed ones were reported to `onBytes`). */
  openBytes(): { sent: number; received: number };
  /** Stops accepting and cuts every open connection and tunnel. */
  close(): Promise<void>;
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 502: 'Bad Gateway', 504: 'Gateway Timeout' };

const statusOf = (reason: EgressReason): number =>
  reason === 'bad_request' ? 400 : reason === 'unresolvable' || reason === 'upstream_unreachable' ? 502 : 403;

/** Headers that belong to one hop (RFC 9110 §7.6.1) or to the proxy: never forwarded. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function forwardedHeaders(headers: IncomingHttpHeaders, authority: string): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase()),
  );
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_HEADERS.has(name) || named.has(name) || name === 'host') continue;
    out[name] = value;
  }
  out.host = authority;
  return out;
}

/** `host:port` of a CONNECT target (`[v6]:port` for IPv6), or null. */
function splitAuthority(authority: string): { host: string; port: number } | null {
  const match = /^(\[[^\]]*\]|[^:]*):(\d{1,5})$/.exec(authority);
  if (!match) return null;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { host: match[1]!, port } : null;
}

/**
 * The host-side egress proxy (ARCHITECTURE §10): HTTP CONNECT and absolute-form plain HTTP, one
 * listener per sandbox. Each request is decided from the sandbox's pinned containment: the
 * allowlist on the requested host (and, in a TLS tunnel, on the ClientHello's server name, which
 * must be that host), then every address the name resolves to against the refused ranges (so a
 * name that also resolves to loopback is refused: DNS rebinding). The connection goes to the exact
 * address that was checked; nothing is resolved twice.
 */
export function createEgressProxy(deps: EgressProxyDeps) {
  const resolve = deps.resolve ?? systemResolver;
  const timeoutMs = deps.timeoutMs ?? 10_000;

  const decide = async (
    containment: SandboxContainment,
    rawHost: string,
    port: number,
  ): Promise<{ host: string; reason: EgressReason; address?: IpAddress }> => {
    const host = normalizeHost(rawHost);
    if (!host) return { host: '-', reason: 'bad_request' };
    if (containment.network === 'deny') return { host, reason: 'network_denied' };
    if (!hostPermitted(containment, host)) return { host, reason: 'not_allowlisted' };
    const literal = parseIpLiteral(host);
    let addresses: IpAddress[];
    if (literal) addresses = [literal];
    else {
      const resolved = await resolve(host).catch(() => [] as string[]);
      addresses = resolved.map(parseIpLiteral).filter((a): a is IpAddress => a !== null);
      if (addresses.length === 0) return { host, reason: 'unresolvable' };
    }
    const allowances = await deps.allowances();
    for (const address of addresses) {
      const refusal = addressRefusal(address);
      if (refusal && !allowances.allows(host, address, port)) return { host, reason: refusal };
    }
    return { host, reason: 'allowed', address: addresses[0]! };
  };

  const refusalText = (decision: EgressDecision) =>
    `sandcast egress refused ${decision.host}:${decision.port} (${decision.reason}); ${
      decision.reason === 'not_allowlisted'
        ? "add the host to the environment's allowlist"
        : decision.reason === 'bad_request'
          ? 'send an absolute http:// URL or CONNECT host:port'
          : 'sandboxes reach only public addresses of the hosts their environment allows'
    }\n`;

  const connectUpstream = (address: IpAddress, port: number): Promise<Socket> =>
    new Promise((resolveSocket, reject) => {
      const socket = connect({ host: address.text, port, family: address.family, noDelay: true });
      const timer = setTimeout(() => socket.destroy(new Error('connect timeout')), timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', reject);
        resolveSocket(socket);
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });

  /** Waits for the tunnel's first bytes: a ClientHello's server name must be the CONNECT host. */
  const firstBytes = (client: Socket, head: Buffer): Promise<Buffer | null> =>
    new Promise((resolveBytes) => {
      let buffered = head;
      const finish = (result: Buffer | null) => {
        clearTimeout(timer);
        client.off('data', onData);
        client.off('end', onEnd);
        client.pause();
        resolveBytes(result);
      };
      const check = () => {
        const reading = readClientHello(buffered);
        if (reading.kind === 'incomplete' && buffered.length < CLIENT_HELLO_MAX_BYTES) return false;
        finish(buffered);
        return true;
      };
      const onData = (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        check();
      };
      const onEnd = () => finish(buffered.length ? buffered : null);
      const timer = setTimeout(() => finish(buffered), timeoutMs);
      if (buffered.length && check()) return;
      client.on('data', onData);
      client.once('end', onEnd);
      client.resume();
    });

  return {
    async open(owner: string, socketPath: string, containment: SandboxContainment): Promise<EgressListener> {
      const open = new Set<Socket>();
      const record = async (decision: EgressDecision) => deps.onDecision(owner, decision);

      const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
        let url: URL | null = null;
        try {
          url = /^http:\/\//i.test(req.url ?? '') ? new URL(req.url!) : null;
        } catch {
          url = null;
        }
        const port = url ? Number(url.port || 80) : 0;
        const decided = url ? await decide(containment, url.hostname, port) : { host: '-', reason: 'bad_request' as const };
        const decision: EgressDecision = {
          allowed: decided.reason === 'allowed',
          host: decided.host,
          port,
          method: 'HTTP',
          reason: decided.reason,
        };
        if (!decided.address || !url) {
          await record(decision);
          res.writeHead(statusOf(decision.reason), {
            'content-type': 'text/plain',
            'x-sandcast-egress': `denied; reason=${decision.reason}`,
          });
          res.end(refusalText(decision));
          return;
        }
        await record(decision);
        const upstream = httpRequest({
          host: decided.address.text,
          family: decided.address.family,
          port,
          method: req.method,
          path: `${url.pathname}${url.search}`,
          headers: forwardedHeaders(req.headers, url.host),
          agent: false,
          timeout: timeoutMs,
        });
        upstream.once('timeout', () => upstream.destroy(new Error('upstream timeout')));
        upstream.once('response', (answer) => {
          const headers = forwardedHeaders(answer.headers, '');
          delete headers.host;
          res.writeHead(answer.statusCode ?? 502, headers);
          answer.pipe(res);
        });
        upstream.once('error', () => {
          if (!res.headersSent) {
            const failed: EgressDecision = { ...decision, allowed: false, reason: 'upstream_unreachable' };
            void record(failed);
            res.writeHead(502, { 'content-type': 'text/plain', 'x-sandcast-egress': 'denied; reason=upstream_unreachable' });
            res.end(refusalText(failed));
          } else res.destroy();
        });
        req.pipe(upstream);
      };

      const onConnect = async (req: IncomingMessage, client: Socket, head: Buffer) => {
        client.on('error', () => undefined);
        // Held until the decision: tunnel bytes are read only once the host is checked.
        client.pause();
        const target = splitAuthority(req.url ?? '');
        const decided = target ? await decide(containment, target.host, target.port) : { host: '-', reason: 'bad_request' as const };
        const decision: EgressDecision = {
          allowed: decided.reason === 'allowed',
          host: decided.host,
          port: target?.port ?? 0,
          method: 'CONNECT',
          reason: decided.reason,
        };
        const refuse = async (d: EgressDecision, answered = false) => {
          await record(d);
          if (answered) {
            client.destroy();
            return;
          }
          const body = refusalText(d);
          const status = statusOf(d.reason);
          client.end(
            `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\ncontent-type: text/plain\r\nx-sandcast-egress: denied; reason=${d.reason}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
          );
        };
        if (!decided.address || !target) return refuse(decision);
        let upstream: Socket;
        try {
          upstream = await connectUpstream(decided.address, target.port);
        } catch {
          return refuse({ ...decision, allowed: false, reason: 'upstream_unreachable' });
        }
        upstream.on('error', () => client.destroy());
        client.once('close', () => upstream.destroy());
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        const first = await firstBytes(client, head);
        const hello = first ? readClientHello(first) : null;
        if (hello?.kind === 'hello' && hello.serverName !== null && normalizeHost(hello.serverName) !== decided.host) {
          upstream.destroy();
          return refuse({ ...decision, allowed: false, reason: 'sni_mismatch' }, true);
        }
        await record(decision);
        if (first) upstream.write(first);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      };

      const server = createServer({ requestTimeout: 0 });
      server.on('connection', (socket: Socket) => {
        open.add(socket);
        socket.once('close', () => {
          open.delete(socket);
          deps.onBytes(owner, socket.bytesRead, socket.bytesWritten);
        });
      });
      server.on('request', (req, res) => void onRequest(req, res).catch(() => res.destroy()));
      server.on('connect', (req, socket, head) => void onConnect(req, socket as Socket, head).catch(() => socket.destroy()));
      // A WebSocket through plain HTTP is not proxied: a client tunnels it with CONNECT.
      server.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 501 Not Implemented\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'));
      server.on('clientError', (_error, socket) => socket.destroy());
      await rm(socketPath, { force: true });
      await new Promise<void>((resolveListen, reject) => {
        server.once('error', reject);
        server.listen(socketPath, () => {
          server.off('error', reject);
          resolveListen();
        });
      });
      await chmod(socketPath, 0o600);
      return {
        openBytes: () => {
          let sent = 0;
          let received = 0;
          for (const socket of open) {
            sent += socket.bytesRead;
            received += socket.bytesWritten;
          }
          return { sent, received };
        },
        close: async () => {
          const closed = new Promise<void>((done) => server.close(() => done()));
          for (const socket of open) socket.destroy();
          await closed;
          await rm(socketPath, { force: true });
        },
      };
    },
  };
}
