import { CSRF_HEADER } from '@sandcast/contracts';
import { allows, type DeploymentMode, type Principal, SandcastError } from '@sandcast/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BRIDGE_TICKET_HEADER, type BridgeTickets } from '../bridge/bridge-tokens.ts';
import type { ApiKeysService } from '../services/api-keys.service.ts';
import type { SettingsService } from '../services/settings.service.ts';
import type { UiSessionsService } from '../services/ui-sessions.service.ts';
import { readSessionCookie } from './session-cookie.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** How the principal was established; null for anonymous callers. */
    authVia: 'local' | 'cookie' | 'bearer' | 'bridge' | null;
    /** When the web UI session behind this request ends (cookie callers only). */
    uiSessionExpiresAt: string | null;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The implicit caller in local_trusted mode: whoever can reach loopback is the operator. */
export const LOCAL_OPERATOR: Principal = { role: 'admin', keyId: null };

function bearer(request: FastifyRequest): string | null | 'malformed' {
  const header = request.headers.authorization;
  if (header === undefined) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1] ?? 'malformed';
}

/**
 * Authenticates every request and enforces the route's declared access before any handler,
 * body parsing or state read. A route without a declaration cannot be registered.
 */
export function registerAccessControl(
  app: FastifyInstance,
  deps: {
    mode: DeploymentMode;
    apiKeys: ApiKeysService;
    settings: SettingsService;
    uiSessions: UiSessionsService;
    /** One-shot tickets of requests the host bridge forwards in-process (src/bridge). */
    bridgeTickets?: BridgeTickets | undefined;
  },
): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('authVia', null);
  app.decorateRequest('uiSessionExpiresAt', null);

  app.addHook('onRoute', (route) => {
    if (!route.config?.access) {
      throw new Error(`route ${route.method} ${route.url} declares no access; add config: { access: 'public' | 'admin' | 'agent' }`);
    }
  });

  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config?.access;
    if (!access) return; // unknown route: the not-found handler answers
    const ticket = request.headers[BRIDGE_TICKET_HEADER];
    if (ticket !== undefined) {
      // Minted by the bridge forwarder for this one in-process request; from anywhere else it matches nothing.
      const principal = typeof ticket === 'string' ? deps.bridgeTickets?.redeem(ticket) : null;
      if (!principal) throw new SandcastError('unauthorized', 'the bridge ticket is unknown; bridge tickets are internal to the server');
      request.principal = principal;
      request.authVia = 'bridge';
      if (allows(access, principal)) return;
      throw new SandcastError('forbidden', 'this route is not reachable through the sandbox bridge');
    }
    const token = bearer(request);
    if (token === 'malformed') throw new SandcastError('unauthorized', 'the Authorization header must be "Bearer <api key>"');
    if (token) {
      request.principal = await deps.apiKeys.authenticate(token);
      if (!request.principal)
        throw new SandcastError('unauthorized', 'the API key is unknown or revoked; create a new one with `sandcast keys create`');
      request.authVia = 'bearer';
    } else {
      // A web UI session cookie; one that is unknown or expired counts as no credential at all.
      const cookie = readSessionCookie(request);
      const session = cookie ? await deps.uiSessions.authenticate(cookie) : null;
      if (session) {
        if (!SAFE_METHODS.has(request.method) && request.headers[CSRF_HEADER] !== '1') {
          throw new SandcastError(
            'forbidden',
            `a request authenticated by the session cookie that changes state must send the header "${CSRF_HEADER}: 1"`,
          );
        }
        request.principal = session.principal;
        request.authVia = 'cookie';
        request.uiSessionExpiresAt = session.expiresAt;
      } else if (deps.mode === 'local_trusted') {
        request.principal = LOCAL_OPERATOR;
        request.authVia = 'local';
      }
    }
    if (allows(access, request.principal)) return;
    if (!request.principal) throw new SandcastError('unauthorized', 'this route needs an API key: send "Authorization: Bearer <api key>"');
    throw new SandcastError('forbidden', `an ${request.principal.role} key cannot use this route; it needs an ${access} key`);
  });

  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.config?.feature !== 'environments') return;
    const settings = await deps.settings.get();
    if (!settings.experimental.enableEnvironments) {
      throw new SandcastError(
        'feature_disabled',
        'Environments are an experimental feature and are turned off. Turn them on in Settings → Instance settings → Experimental, ' +
          'or run `sandcast settings set experimental.enableEnvironments true`.',
      );
    }
  });
}
