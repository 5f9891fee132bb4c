import { createHash, randomBytes } from 'node:crypto';
import { type Principal, SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { type Clock, systemClock } from '../clock.ts';
import type { ApiKeysService } from './api-keys.service.ts';

export type UiSessionsService = ReturnType<typeof createUiSessionsService>;

const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** A web UI session as the HTTP layer sees it: the principal and when it ends. */
export interface UiSessionPrincipal {
  principal: Principal;
  expiresAt: string;
}

/**
 * Browser logins for the web UI: an API key is exchanged for a random session token that travels
 * only in an httpOnly cookie. The key itself never reaches browser storage, and only a SHA-256 hash
 * of the token is stored.
 */
export function createUiSessionsService(deps: { store: Store; apiKeys: ApiKeysService; ttlMs: number; clock?: Clock | undefined }) {
  const now = () => (deps.clock ?? systemClock).now();
  return {
    /** Opens a session for a live API key; a wrong key is a 401 that says what to do. */
    async login(apiKey: string): Promise<{ token: string; principal: Principal; expiresAt: string }> {
      const principal = await deps.apiKeys.authenticate(apiKey);
      if (!principal?.keyId) {
        throw new SandcastError(
          'unauthorized',
          'that API key is unknown or revoked. Use the admin key in <data dir>/admin-api-key, or create one with `sandcast keys create`.',
        );
      }
      const token = randomBytes(32).toString('base64url');
      const createdAt = now();
      const expiresAt = new Date(createdAt.getTime() + deps.ttlMs);
      await deps.store.repos.uiSessions.insert({ tokenHash: hashToken(token), apiKeyId: principal.keyId, createdAt, expiresAt });
      return { token, principal, expiresAt: expiresAt.toISOString() };
    },

    /** The principal behind a session token, or null when it is unknown, expired, logged out or its key was revoked. */
    async authenticate(token: string): Promise<UiSessionPrincipal | null> {
      const session = await deps.store.repos.uiSessions.findLive(hashToken(token), now());
      return session ? { principal: { role: session.role, keyId: session.apiKeyId }, expiresAt: session.expiresAt } : null;
    },

    /** Ends the session; true when one was live. */
    logout: (token: string): Promise<boolean> => deps.store.repos.uiSessions.revoke(hashToken(token), now()),

    /** Drops sessions that ended more than a day ago (called by the reconciler's sweep or on login). */
    prune: (): Promise<number> => deps.store.repos.uiSessions.deleteEnded(new Date(now().getTime() - 86_400_000)),
  };
}
