import { API_PATHS, type AuthSession, LoginBodySchema } from '@sandcast/contracts';
import type { DeploymentMode } from '@sandcast/core';
import type { FastifyInstance } from 'fastify';
import type { UiSessionsService } from '../../services/ui-sessions.service.ts';
import { clearSessionCookie, readSessionCookie, setSessionCookie } from '../session-cookie.ts';
import { parse } from '../validate.ts';

/** Log in to the web UI with an API key, see who you are, log out. */
export function registerAuthSessionRoutes(app: FastifyInstance, deps: { mode: DeploymentMode; uiSessions: UiSessionsService }): void {
  const config = { access: 'public' } as const;

  app.get(API_PATHS.authSession, { config }, async (request): Promise<AuthSession> => {
    const principal = request.principal;
    return {
      deploymentMode: deps.mode,
      authenticated: principal !== null,
      role: principal?.role ?? null,
      // A bridged request never reaches this route (it is not on the bridge's allowlist).
      via: request.authVia === 'bridge' ? null : request.authVia,
      expiresAt: request.uiSessionExpiresAt,
    };
  });

  app.post(API_PATHS.authSession, { config }, async (request, reply) => {
    const { apiKey } = parse(LoginBodySchema, request.body);
    const session = await deps.uiSessions.login(apiKey);
    void deps.uiSessions.prune().catch(() => undefined);
    setSessionCookie(request, reply, session.token, session.expiresAt);
    const answer: AuthSession = {
      deploymentMode: deps.mode,
      authenticated: true,
      role: session.principal.role,
      via: 'cookie',
      expiresAt: session.expiresAt,
    };
    return reply.status(201).send(answer);
  });

  app.delete(API_PATHS.authSession, { config }, async (request, reply) => {
    const token = readSessionCookie(request);
    const loggedOut = token ? await deps.uiSessions.logout(token) : false;
    clearSessionCookie(request, reply);
    return { loggedOut };
  });
}
