import { type DeploymentMode, SandcastError } from '@sandcast/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Which `Host` and `Origin` values the server answers (docs/decisions/0009-http-edge-hardening.md). */
export interface HostPolicy {
  mode: DeploymentMode;
  /** SANDCAST_ALLOWED_HOSTS: `name`, `name:port` or `*.name` entries; authenticated mode only. */
  allowedHosts: readonly string[];
  /** SANDCAST_PUBLIC_URL: the origin browsers use to reach this server, or null. */
  publicUrl: string | null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A Host header is a name or an IP literal and an optional port: nothing else (no userinfo, no path). */
const HOST_SYNTAX = /^(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** Where a sandbox's served ports will appear; their pages are sandbox content, never the operator. */
const SANDBOX_CONTENT_SUFFIX = '.sandboxes.localhost';

interface HostName {
  /** Lower case, IPv6 in brackets, IPv4 in dotted quads (as WHATWG URL normalises them). */
  hostname: string;
  /** `hostname[:port]` with the port only when one was given. */
  host: string;
}

function parseHost(value: string): HostName | null {
  if (!HOST_SYNTAX.test(value)) return null;
  try {
    const url = new URL(`http://${value}`);
    return { hostname: url.hostname, host: url.host };
  } catch {
    return null;
  }
}

function parseOrigin(value: string): (HostName & { origin: string }) | null {
  try {
    const url = new URL(value);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== value.replace(/\/$/, '')) return null;
    return { hostname: url.hostname, host: url.host, origin: url.origin };
  } catch {
    return null;
  }
}

/**
 * Names that resolve to this machine only: `localhost` and its subdomains (RFC 6761 reserves them
 * for loopback, and sandbox ports will be served on `<port>-<id>.sandboxes.localhost`), 127.0.0.0/8
 * and [::1].
 */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** A page the operator's own browser shows from this machine, and not one a sandbox serves. */
function isOperatorLoopback(hostname: string): boolean {
  return isLoopbackName(hostname) && !hostname.endsWith(SANDBOX_CONTENT_SUFFIX);
}

function matchesAllowed(name: HostName, entries: readonly string[]): boolean {
  return entries.some((entry) => {
    const wanted = entry.toLowerCase();
    if (wanted.startsWith('*.')) return name.hostname.endsWith(wanted.slice(1));
    return wanted.includes(':') && !wanted.startsWith('[') ? name.host === wanted : name.hostname === wanted || name.host === wanted;
  });
}

/** Why a Host header is refused, or null when the server answers for it. */
export function hostRefusal(policy: HostPolicy, hostHeader: string | undefined): string | null {
  // HTTP/1.0 clients may send none; a browser always does, so a rebinding page cannot leave it out.
  if (hostHeader === undefined || hostHeader === '') return null;
  const host = parseHost(hostHeader);
  if (policy.mode === 'local_trusted') {
    if (host && isLoopbackName(host.hostname)) return null;
    return (
      `this server answers only for loopback names (127.0.0.1, localhost, [::1]) in local_trusted mode, not for Host "${hostHeader.slice(0, 100)}". ` +
      'Open it as http://127.0.0.1:<port>; to serve other names, set SANDCAST_DEPLOYMENT_MODE=authenticated and SANDCAST_ALLOWED_HOSTS.'
    );
  }
  const allowed = [...policy.allowedHosts, ...(policy.publicUrl ? [new URL(policy.publicUrl).host] : [])];
  if (allowed.length === 0) return null;
  if (host && (isLoopbackName(host.hostname) || matchesAllowed(host, allowed))) return null;
  return (
    `Host "${hostHeader.slice(0, 100)}" is not one this server answers for; ` +
    'add it to SANDCAST_ALLOWED_HOSTS (comma-separated) or reach the server through SANDCAST_PUBLIC_URL.'
  );
}

/** Why an Origin header is refused on a state-changing request or WebSocket upgrade, or null. */
export function originRefusal(policy: HostPolicy, originHeader: string | undefined, hostHeader: string | undefined): string | null {
  // Command-line clients send no Origin; browsers send one on every request that could change state.
  if (originHeader === undefined) return null;
  const origin = parseOrigin(originHeader);
  const fix =
    policy.mode === 'local_trusted'
      ? 'Use the web UI at http://127.0.0.1:<port> itself, or call the API without a browser.'
      : 'Use the web UI at its own address (SANDCAST_PUBLIC_URL), or call the API without a browser.';
  const refusal = `a request from the web page at Origin "${originHeader.slice(0, 100)}" may not change anything here. ${fix}`;
  if (!origin) return refusal;
  if (isOperatorLoopback(origin.hostname)) return null;
  if (policy.mode === 'local_trusted') return refusal;
  const host = hostHeader ? parseHost(hostHeader) : null;
  if (host && host.host === origin.host && !origin.hostname.endsWith(SANDBOX_CONTENT_SUFFIX)) return null;
  if (policy.publicUrl && new URL(policy.publicUrl).origin === origin.origin) return null;
  if (matchesAllowed(origin, policy.allowedHosts)) return null;
  return refusal;
}

function isWebSocketUpgrade(request: FastifyRequest): boolean {
  return String(request.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/**
 * The DNS-rebinding and cross-site guard. Runs first on every request (WebSocket upgrades
 * included), before authentication: a page on another site, even one whose name an attacker has
 * pointed at 127.0.0.1, gets nothing from a server that trusts whoever reaches loopback.
 */
export function registerHostGuard(app: FastifyInstance, policy: HostPolicy): void {
  app.addHook('onRequest', async (request) => {
    const hostProblem = hostRefusal(policy, request.headers.host);
    if (hostProblem) throw new SandcastError('host_not_allowed', hostProblem);
    if (SAFE_METHODS.has(request.method) && !isWebSocketUpgrade(request)) return;
    const originProblem = originRefusal(policy, request.headers.origin, request.headers.host);
    if (originProblem) throw new SandcastError('forbidden', originProblem);
  });
  // An upgrade answered with an ordinary response (this refusal, or any other error before the
  // WebSocket plugin's own hooks ran) holds a socket no HTTP server tracks: close it once answered.
  app.addHook('onResponse', async (request) => {
    if (isWebSocketUpgrade(request) && !request.raw.socket.destroyed) request.raw.socket.destroy();
  });
}
