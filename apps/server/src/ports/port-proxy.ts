import http from 'node:http';
import type { Duplex } from 'node:stream';
import { PORT_TOKEN_PARAM } from '@sandcast/contracts';
import { type Principal, SandcastError } from '@sandcast/core';
import { isProviderError } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import { toErrorResponse } from '../http/error-handler.ts';
import type { OpenPortTarget, PortsService } from '../services/ports.service.ts';
import type { SecretBox } from '../services/secrets.ts';
import type { PortConnections } from './port-connections.ts';
import { matchPortHost, type PortHostPolicy, type PortOwner } from './port-hosts.ts';
import { issuePortToken, PORT_COOKIE_TTL_MS, verifyPortToken } from './port-tokens.ts';

/** The cookie a private port's URL token is exchanged for; host-only, so it names one port of one owner. */
const PORT_COOKIE = 'sandcast_port';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export interface PortProxyDeps {
  hosts: PortHostPolicy;
  ports: PortsService;
  secrets: SecretBox;
  connections: PortConnections;
  /** An API key's principal, or null when unknown or revoked. */
  authenticate: (apiKey: string) => Promise<Principal | null>;
  log: FastifyBaseLogger;
  clock?: Clock | undefined;
}

/** A request the forwarder may pass on: its path without our token, and its headers without our credentials. */
interface Admitted {
  target: OpenPortTarget;
  path: string;
  headers: Array<[string, string]>;
  /** A URL token to trade for a cookie (then redirect to `path`). */
  exchange: boolean;
}

/**
 * Serves open ports of sandboxes and setup sessions on their own host names
 * (docs/decisions/0015-sandbox-ports.md, 0017-setup-session-ports.md).
 * Requests and WebSocket upgrades whose Host is under the ports base domain are taken before
 * Fastify sees them, so sandbox content never reaches the API's routes, hooks or cookies.
 */
export function installPortProxy(server: http.Server, deps: PortProxyDeps): void {
  const emit = server.emit.bind(server) as (event: string, ...args: unknown[]) => boolean;
  server.emit = ((event: string, ...args: unknown[]) => {
    if (event === 'request' || event === 'upgrade') {
      const request = args[0] as http.IncomingMessage;
      const match = matchPortHost(deps.hosts.baseDomain, request.headers.host);
      if (match) {
        if (event === 'request') void handleRequest(deps, request, args[1] as http.ServerResponse, match);
        else void handleUpgrade(deps, request, args[1] as Duplex, args[2] as Buffer, match);
        return true;
      }
    }
    return emit(event, ...args);
  }) as typeof server.emit;
}

const now = (deps: PortProxyDeps) => (deps.clock?.now() ?? new Date()).getTime();

function refusal(code: 'not_found' | 'unauthorized' | 'bad_request' | 'provider_error', message: string) {
  return toErrorResponse(new SandcastError(code, message));
}

/** How refusals name the owner and the command that helps. */
const OWNER_WORDS: Record<PortOwner['kind'], { noun: string; cli: string; target: string }> = {
  sandbox: { noun: 'the sandbox is gone', cli: 'sandcast sandbox port', target: '<sandbox id>' },
  setup: { noun: 'the setup session has ended', cli: 'sandcast image port', target: '<env|session id>' },
};

const notOpen = (kind: PortOwner['kind'] | null) =>
  kind === null
    ? 'nothing is served at this address: no open port has this name.'
    : `nothing is served at this address: the port is not open, or ${OWNER_WORDS[kind].noun}. List open ports with \`${OWNER_WORDS[kind].cli} list ${OWNER_WORDS[kind].target}\`.`;

/** Who may use the port, and what to forward; or a refusal. */
async function admit(
  deps: PortProxyDeps,
  request: http.IncomingMessage,
  match: NonNullable<ReturnType<typeof matchPortHost>>,
): Promise<Admitted | { status: number; body: unknown }> {
  if (match.kind === 'invalid') return refusal('not_found', notOpen(null));
  const rawUrl = request.url ?? '/';
  if (!rawUrl.startsWith('/') || rawUrl.includes('\0'))
    return refusal('bad_request', 'the request target must be a path starting with "/"');
  const target = await deps.ports.target(match.owner, match.port);
  if (!target) return refusal('not_found', notOpen(match.owner.kind));
  const words = OWNER_WORDS[match.owner.kind];
  const queryAt = rawUrl.indexOf('?');
  const pathname = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
  const params = new URLSearchParams(queryAt < 0 ? '' : rawUrl.slice(queryAt + 1));
  const urlToken = params.get(PORT_TOKEN_PARAM);
  params.delete(PORT_TOKEN_PARAM);
  const rest = params.toString();
  const path = rest ? `${pathname}?${rest}` : pathname;

  let bearerUsed = false;
  let exchange = false;
  if (target.record.visibility === 'private') {
    const at = now(deps);
    const cookie = readCookie(request.headers.cookie, PORT_COOKIE);
    if (urlToken !== null) {
      if (!verifyPortToken(deps.secrets, target.grant, urlToken, at)) {
        return refusal(
          'unauthorized',
          `the token in this URL is not valid for this port, or has expired; get a fresh URL with \`${words.cli} url\``,
        );
      }
      exchange = true;
    } else if (cookie && verifyPortToken(deps.secrets, target.grant, cookie, at)) {
      // The browser's cookie for this port.
    } else {
      const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
      const principal = bearer ? await deps.authenticate(bearer) : null;
      const allowed =
        principal !== null && (principal.role === 'admin' || (principal.keyId !== null && principal.keyId === target.createdByKeyId));
      if (!allowed) {
        return refusal(
          'unauthorized',
          `this port is private: open the URL \`${words.cli} url ${words.target} <port>\` prints (it carries a token), ` +
            'or send "Authorization: Bearer <api key>" with a key that may use it',
        );
      }
      bearerUsed = true;
    }
  }
  // The sandbox sees none of Sandcast's credentials.
  const headers: Array<[string, string]> = [];
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!;
    const value = request.rawHeaders[i + 1]!;
    const lower = name.toLowerCase();
    if (lower === 'authorization' && bearerUsed) continue;
    if (lower === 'cookie') {
      const kept = value
        .split(';')
        .filter((part) => part.split('=')[0]!.trim() !== PORT_COOKIE)
        .join(';')
        .trim();
      if (kept) headers.push([name, kept]);
      continue;
    }
    headers.push([name, value]);
  }
  return { target, path, headers, exchange };
}

function readCookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

function cookieFor(deps: PortProxyDeps, target: OpenPortTarget): string {
  const expiresAtMs = now(deps) + PORT_COOKIE_TTL_MS;
  const token = issuePortToken(deps.secrets, target.grant, expiresAtMs);
  const secure = deps.hosts.scheme === 'https' ? ['Secure'] : [];
  return [`${PORT_COOKIE}=${token}`, `Max-Age=${PORT_COOKIE_TTL_MS / 1000}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', ...secure].join('; ');
}

async function connect(deps: PortProxyDeps, target: OpenPortTarget): Promise<Duplex | { status: number; body: unknown }> {
  try {
    return await target.provider.openPortStream!(target.instanceId, target.record.port);
  } catch (error) {
    if (isProviderError(error)) {
      const message =
        error.code === 'not_found'
          ? `nothing listens on port ${target.record.port} inside the sandbox yet; start the server there (listening on 127.0.0.1 or 0.0.0.0) and retry`
          : `the sandbox's port could not be reached: ${error.message}`;
      return { status: 502, body: refusal('provider_error', message).body };
    }
    deps.log.error({ err: error }, 'forwarding to a sandbox port failed');
    return { status: 502, body: refusal('provider_error', 'the sandbox port could not be reached').body };
  }
}

async function handleRequest(
  deps: PortProxyDeps,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  match: NonNullable<ReturnType<typeof matchPortHost>>,
): Promise<void> {
  const answer = (status: number, body: unknown) => {
    if (response.headersSent) return void response.destroy();
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    response.end(JSON.stringify(body));
  };
  try {
    const admitted = await admit(deps, request, match);
    if (!('target' in admitted)) return answer(admitted.status, admitted.body);
    const { target } = admitted;
    if (admitted.exchange && (request.method === 'GET' || request.method === 'HEAD')) {
      // Trade the URL's token for a cookie and drop it from the address bar (and from history).
      response.writeHead(303, { location: admitted.path, 'set-cookie': cookieFor(deps, target), 'cache-control': 'no-store' });
      response.end();
      return;
    }
    const stream = await connect(deps, target);
    if (!('pipe' in stream)) return answer(stream.status, stream.body);
    deps.connections.track(target.owner.id, target.record.port, stream);
    const headers = admitted.headers.filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase()));
    headers.push(['X-Forwarded-Proto', deps.hosts.scheme]);
    const upstream = http.request({
      method: request.method,
      path: admitted.path,
      headers: headers.flat() as unknown as http.OutgoingHttpHeaders,
      createConnection: () => stream as never,
      setHost: false,
    });
    upstream.once('response', (answerFromSandbox) => {
      const outgoing: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(answerFromSandbox.headers)) {
        if (!HOP_BY_HOP.has(name) && value !== undefined) outgoing[name] = value;
      }
      response.writeHead(answerFromSandbox.statusCode ?? 502, outgoing);
      answerFromSandbox.pipe(response);
      answerFromSandbox.once('error', () => response.destroy());
      answerFromSandbox.once('close', () => {
        if (!answerFromSandbox.complete) response.destroy();
      });
    });
    upstream.once('error', () =>
      answer(502, refusal('provider_error', 'the server in the sandbox closed the connection without an answer').body),
    );
    // The client went away: so does the relay. The relay going away (the port closed, the server in
    // the sandbox quit) reaches the client through the sandbox's answer, aborted or ended; cutting
    // the response here would race its last bytes still being flushed.
    response.once('close', () => stream.destroy());
    request.pipe(upstream);
  } catch (error) {
    deps.log.error({ err: error }, 'forwarding to a sandbox port failed');
    answer(500, toErrorResponse(error).body);
  }
}

async function handleUpgrade(
  deps: PortProxyDeps,
  request: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
  match: NonNullable<ReturnType<typeof matchPortHost>>,
): Promise<void> {
  socket.on('error', () => socket.destroy());
  const answer = (status: number, body: unknown) => {
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  };
  try {
    const admitted = await admit(deps, request, match);
    if (!('target' in admitted)) return answer(admitted.status, admitted.body);
    const stream = await connect(deps, admitted.target);
    if (!('pipe' in stream)) return answer(stream.status, stream.body);
    deps.connections.track(admitted.target.owner.id, admitted.target.record.port, stream, socket);
    const lines = [`${request.method} ${admitted.path} HTTP/1.1`, ...admitted.headers.map(([name, value]) => `${name}: ${value}`)];
    stream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) stream.write(head);
    stream.on('error', () => socket.destroy());
    stream.once('close', () => socket.destroy());
    socket.once('close', () => stream.destroy());
    socket.pipe(stream);
    stream.pipe(socket);
  } catch (error) {
    deps.log.error({ err: error }, 'forwarding a WebSocket to a sandbox port failed');
    answer(500, toErrorResponse(error).body);
  }
}
