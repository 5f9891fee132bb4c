import type { FrameHeaders } from './frames.ts';

/*
 * The request policy of the bridge: which method and path a sandbox may call, which headers pass,
 * how large a body may be, and where an upstream request goes. Pure functions; the server's
 * forwarder applies them before adding the real credential.
 */

/** The most body bytes a bridged request carries (the frame cap leaves room for 1 MiB in base64). */
export const MAX_BRIDGE_BODY_BYTES = 1024 * 1024;

/** Request headers a sandbox may send on (lowercase). Everything else is dropped. */
export const DEFAULT_REQUEST_HEADERS = [
  'accept',
  'accept-language',
  'content-type',
  'idempotency-key',
  'if-match',
  'if-none-match',
  'user-agent',
];

/** Never forwarded from inside, whatever an allowlist says: credentials and routing are the host's. */
const NEVER_FROM_INSIDE = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'x-sandcast-api-key',
]);

/** Hop-by-hop and framing headers: the gateway sets its own. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'proxy-connection',
]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
// Visible ASCII, space and tab; nothing that could end a header line.
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/** The request headers that pass: allowlisted, never a credential, values on one line. */
export function filterRequestHeaders(headers: FrameHeaders, allowlist: readonly string[] = DEFAULT_REQUEST_HEADERS): FrameHeaders {
  const allowed = new Set(allowlist.map((name) => name.toLowerCase()));
  const out: FrameHeaders = {};
  for (const [raw, value] of Object.entries(headers)) {
    const name = raw.toLowerCase();
    if (!allowed.has(name) || NEVER_FROM_INSIDE.has(name) || HOP_BY_HOP.has(name) || !HEADER_VALUE.test(value)) continue;
    out[name] = value;
  }
  return out;
}

/** Response headers as a frame may carry them: lowercase tokens, one-line values, no framing, no cookies. */
export function sanitizeResponseHeaders(headers: Readonly<Record<string, string>>): FrameHeaders {
  const out: FrameHeaders = {};
  for (const [raw, value] of Object.entries(headers)) {
    const name = raw.toLowerCase();
    if (!TOKEN.test(name) || HOP_BY_HOP.has(name) || name === 'set-cookie' || typeof value !== 'string' || !HEADER_VALUE.test(value))
      continue;
    out[name] = value;
  }
  return out;
}

/** The decoded size of a base64 body, without decoding it. */
export function base64Bytes(body: string): number {
  const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  return (body.length / 4) * 3 - padding;
}

export function bodyWithinLimit(body: string | Uint8Array, limit = MAX_BRIDGE_BODY_BYTES): boolean {
  return (typeof body === 'string' ? base64Bytes(body) : body.length) <= limit;
}

export type PathRefusal =
  | 'not_absolute'
  | 'dot_segment'
  | 'empty_segment'
  | 'nul'
  | 'backslash'
  | 'encoded_separator'
  | 'double_encoded'
  | 'bad_character';

/**
 * A bridged path checked and split: absolute, no `.` or `..` segment (plain or percent-encoded),
 * no `//`, no NUL, no backslash, no encoded `/` or `\`, no `%25`, printable ASCII only. Nothing is decoded
 * or rewritten: what passes is exactly what the upstream gets.
 */
export function normalizeBridgePath(raw: string): { ok: true; path: string; query: string } | { ok: false; reason: PathRefusal } {
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  const query = q === -1 ? '' : raw.slice(q + 1);
  if (/\0|%00/i.test(raw)) return { ok: false, reason: 'nul' };
  if (/\\|%5c/i.test(raw)) return { ok: false, reason: 'backslash' };
  if (!/^[\x21-\x7e]*$/.test(raw) || raw.includes('#')) return { ok: false, reason: 'bad_character' };
  if (!path.startsWith('/')) return { ok: false, reason: 'not_absolute' };
  if (/%2f/i.test(path)) return { ok: false, reason: 'encoded_separator' };
  // `%25` decodes to `%`: an upstream that decodes twice would see `%2e%2e` as `..`.
  if (/%25/.test(path)) return { ok: false, reason: 'double_encoded' };
  const segments = path.slice(1).split('/');
  for (let i = 0; i < segments.length; i++) {
    const segment = (segments[i] as string).replace(/%2e/gi, '.');
    if (segment === '.' || segment === '..') return { ok: false, reason: 'dot_segment' };
    if (segment === '' && i < segments.length - 1) return { ok: false, reason: 'empty_segment' };
  }
  return { ok: true, path, query };
}

export interface RouteMatch {
  pattern: string;
  params: Record<string, string>;
}

export interface RouteAllowlist {
  /** The first pattern matching the method and path, or null. `:sessionId` must be the bound session. */
  match(method: string, rawPath: string): RouteMatch | null;
}

const PARAM_VALUE = /^[A-Za-z0-9._~-]+$/;

/**
 * Compiles patterns such as `GET /api/sessions/:sessionId/files` for one sandbox. A `:name`
 * segment matches one path segment of unreserved characters; `:sessionId` matches only
 * `options.sessionId`, so a path naming another session never matches. The query is not part of
 * the match. A malformed pattern throws at compile time.
 */
export function compileRouteAllowlist(patterns: readonly string[], options: { sessionId: string }): RouteAllowlist {
  const compiled = patterns.map((pattern) => {
    const match = /^([A-Z]+) (\/[^\s?#]*)$/.exec(pattern);
    if (!match) throw new Error(`invalid bridge route pattern ${JSON.stringify(pattern)}: write "METHOD /path/:param"`);
    const segments = (match[2] as string).slice(1).split('/');
    return { pattern, method: match[1] as string, segments };
  });
  return {
    match(method, rawPath) {
      const checked = normalizeBridgePath(rawPath);
      if (!checked.ok) return null;
      const parts = checked.path.slice(1).split('/');
      for (const route of compiled) {
        if (route.method !== method || route.segments.length !== parts.length) continue;
        const params: Record<string, string> = {};
        const fits = route.segments.every((segment, i) => {
          const part = parts[i] as string;
          if (!segment.startsWith(':')) return segment === part;
          if (!PARAM_VALUE.test(part)) return false;
          const name = segment.slice(1);
          if (name === 'sessionId' && part !== options.sessionId) return false;
          params[name] = part;
          return true;
        });
        if (fits) return { pattern: route.pattern, params };
      }
      return null;
    },
  };
}

/** An instance-level upstream: a service reached through the host, its credential added there. */
export interface Upstream {
  name: string;
  baseUrl: string;
  /** Exact paths, or prefixes ending in `/*` (one or more further segments). */
  allowedPaths: readonly string[];
}

/** Bridged paths under this prefix go to an upstream: `/upstreams/<name>/<path>`. */
export const UPSTREAM_PREFIX = '/upstreams/';

export type UpstreamRefusal = PathRefusal | 'unknown_upstream' | 'path_not_allowed';

function allowedBy(path: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) =>
    entry.endsWith('/*') ? path.startsWith(entry.slice(0, -1)) && path.length > entry.length - 1 : path === entry,
  );
}

/**
 * The URL an upstream request goes to: `baseUrl` (its own path prefix kept) plus the rest of the
 * bridged path and its query. The path is checked by `normalizeBridgePath` first, must be in the
 * upstream's `allowedPaths`, and the result must stay on the upstream's origin.
 */
export function resolveUpstream(
  upstreams: readonly Upstream[],
  rawPath: string,
): { ok: true; upstream: string; url: string } | { ok: false; reason: UpstreamRefusal } {
  const checked = normalizeBridgePath(rawPath);
  if (!checked.ok) return checked;
  if (!checked.path.startsWith(UPSTREAM_PREFIX)) return { ok: false, reason: 'unknown_upstream' };
  const rest = checked.path.slice(UPSTREAM_PREFIX.length);
  const slash = rest.indexOf('/');
  const name = slash === -1 ? rest : rest.slice(0, slash);
  const upstream = upstreams.find((u) => u.name === name);
  if (!upstream) return { ok: false, reason: 'unknown_upstream' };
  const path = slash === -1 ? '/' : rest.slice(slash);
  if (!allowedBy(path, upstream.allowedPaths)) return { ok: false, reason: 'path_not_allowed' };
  const base = new URL(upstream.baseUrl);
  const url = new URL(base.href);
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
  url.search = checked.query ? `?${checked.query}` : '';
  url.hash = '';
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname.replace(/\/+$/, '')))
    return { ok: false, reason: 'path_not_allowed' };
  return { ok: true, upstream: upstream.name, url: url.href };
}
