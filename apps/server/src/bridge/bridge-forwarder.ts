import {
  bodyWithinLimit,
  compileRouteAllowlist,
  type Forwarder,
  type ForwardResponse,
  filterRequestHeaders,
  refusal,
  resolveUpstream,
  sanitizeResponseHeaders,
  UPSTREAM_PREFIX,
} from '@sandcast/bridge';
import { API_PATHS } from '@sandcast/contracts';
import { BRIDGE_TICKET_HEADER, type BridgeBinding, type BridgeTickets, type BridgeTokens } from './bridge-tokens.ts';

/** An upstream as the forwarder uses it: the credential decrypted, in memory only. */
export interface ResolvedUpstream {
  name: string;
  baseUrl: string;
  allowedPaths: string[];
  credential: string;
}

/** What `app.inject` answers, as far as the forwarder reads it. */
interface InjectAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  rawPayload: Buffer;
}

export type Inject = (request: {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: Buffer | undefined;
}) => Promise<InjectAnswer>;

/** `API_PATHS.x` with its `:id` as the bound `:sessionId` of the bridge allowlist. */
const sessionRoute = (method: string, path: string) => `${method} ${path.replace(':id', ':sessionId')}`;

/**
 * The Sandcast routes a sandbox reaches through its bridge: the tools of its own session (exec,
 * files, reading the session, its sandbox's checkpoints, its fleet). Any other route, another
 * session's included, answers 403. The session's own access rules still apply behind this list.
 */
const SESSION_BRIDGE_ROUTES: readonly string[] = [
  sessionRoute('GET', API_PATHS.session),
  sessionRoute('POST', API_PATHS.sessionExec),
  sessionRoute('GET', API_PATHS.sessionFiles),
  sessionRoute('PUT', API_PATHS.sessionFiles),
  sessionRoute('GET', API_PATHS.sessionCheckpoints),
  sessionRoute('POST', API_PATHS.sessionCheckpoints),
  sessionRoute('POST', API_PATHS.sessionCheckpointRestore),
  sessionRoute('GET', API_PATHS.fleetSandboxes),
  sessionRoute('POST', API_PATHS.fleetSandboxes),
  sessionRoute('GET', API_PATHS.fleetSandbox),
  sessionRoute('POST', API_PATHS.fleetSandboxExec),
  sessionRoute('GET', API_PATHS.fleetSandboxFiles),
  sessionRoute('PUT', API_PATHS.fleetSandboxFiles),
  sessionRoute('POST', API_PATHS.fleetSandboxCheckpoints),
  sessionRoute('POST', API_PATHS.fleetSandboxManage),
];

const json = (status: number, code: string, message: string): ForwardResponse => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify({ error: { code, message } })),
});

const fromRefusal = (code: Parameters<typeof refusal>[1]): ForwardResponse => {
  const answer = refusal('-', code);
  return { status: answer.status, headers: answer.headers, body: Buffer.from(answer.body, 'base64') };
};

const bearer = (value: string | undefined): string | null => /^Bearer\s+(\S+)$/i.exec(value ?? '')?.[1] ?? null;

/** Response headers of either target, as strings. */
function headerStrings(headers: InjectAnswer['headers'] | Headers): Record<string, string> {
  const out: Record<string, string> = {};
  const entries: [string, string | string[] | number | undefined][] = [];
  if (headers instanceof Headers) {
    headers.forEach((value, name) => {
      entries.push([name, value]);
    });
  } else entries.push(...Object.entries(headers));
  for (const [name, value] of entries) if (value !== undefined) out[name] = [value].flat().join(', ');
  return sanitizeResponseHeaders(out);
}

/**
 * The host side of one sandbox's bridge: every request from inside must carry the sandbox's
 * bridge token (`Authorization: Bearer $SANDCAST_BRIDGE_TOKEN`). Then either an upstream
 * (`/upstreams/<name>/...`, the upstream's credential added here) or a route of the session's
 * own tools, run in-process through `inject` as the session's principal with the sandbox named
 * as the source. Only allowlisted headers pass; the token itself never goes further.
 */
export function createBridgeForwarder(deps: {
  binding: BridgeBinding;
  tokens: BridgeTokens;
  tickets: BridgeTickets;
  inject: Inject;
  upstreams: () => Promise<ResolvedUpstream[]>;
  /** The upstream HTTP client (tests pass a loopback one); default global fetch. */
  fetch?: typeof fetch;
}): Forwarder {
  const { binding } = deps;
  const allowlist = compileRouteAllowlist(SESSION_BRIDGE_ROUTES, { sessionId: binding.sessionId });
  const principal = { ...binding.principal, bridge: { sandboxId: binding.sandboxId, sessionId: binding.sessionId } };
  return async (request, signal) => {
    if (!deps.tokens.verify(binding.sandboxId, bearer(request.headers.authorization))) {
      return json(401, 'unauthorized', 'send the sandbox bridge token: "Authorization: Bearer $SANDCAST_BRIDGE_TOKEN"');
    }
    if (!bodyWithinLimit(request.body)) return fromRefusal('payload_too_large');
    const headers = filterRequestHeaders(request.headers);
    if (request.path.startsWith(UPSTREAM_PREFIX)) {
      const upstreams = await deps.upstreams();
      const target = resolveUpstream(upstreams, request.path);
      if (!target.ok) return fromRefusal('route_not_allowed');
      const upstream = upstreams.find((u) => u.name === target.upstream) as ResolvedUpstream;
      const answer = await (deps.fetch ?? fetch)(target.url, {
        method: request.method,
        headers: { ...headers, authorization: `Bearer ${upstream.credential}` },
        body: request.method === 'GET' || request.method === 'HEAD' ? undefined : new Uint8Array(request.body),
        redirect: 'manual',
        signal,
      });
      return { status: answer.status, headers: headerStrings(answer.headers), body: new Uint8Array(await answer.arrayBuffer()) };
    }
    if (!allowlist.match(request.method, request.path)) return fromRefusal('route_not_allowed');
    const ticket = deps.tickets.mint(principal);
    try {
      const answer = await deps.inject({
        method: request.method,
        url: request.path,
        headers: { ...headers, [BRIDGE_TICKET_HEADER]: ticket },
        payload: request.body.length > 0 ? request.body : undefined,
      });
      return { status: answer.statusCode, headers: headerStrings(answer.headers), body: answer.rawPayload };
    } finally {
      deps.tickets.discard(ticket);
    }
  };
}
