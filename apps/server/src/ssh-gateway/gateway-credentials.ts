import { createHash, randomBytes } from 'node:crypto';
import type { ConnectionPayload } from '@sandcast/contracts';
import type { SetupSession } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../clock.ts';
import { type ConnectionBroker, directConnectionBroker } from '../services/custom-images/connection-broker.ts';

/** Where the SSH gateway listens; null until it does (or when it is off). */
export interface SshEndpoint {
  address: { host: string; port: number } | null;
}

const hashCredential = (credential: string) => createHash('sha256').update(credential).digest('hex');

/** Usernames start with a letter, so `ssh -p N <credential>@host` never reads one as an option. */
const CREDENTIAL_PREFIX = 'scs';

export type GatewayCredentials = ReturnType<typeof createGatewayCredentials>;

/** The gateway's usernames: fresh per setup session, expiring with it, stored only as hashes. */
export function createGatewayCredentials(deps: { store: Store; clock?: Clock | undefined }) {
  const clock = deps.clock ?? systemClock;
  return {
    async mint(session: SetupSession): Promise<string> {
      const credential = `${CREDENTIAL_PREFIX}${randomBytes(32).toString('base64url').replaceAll('-', 'x').replaceAll('_', 'y')}`;
      await deps.store.repos.sshCredentials.insert({
        setupSessionId: session.id,
        credentialHash: hashCredential(credential),
        expiresAt: new Date(session.expiresAt),
      });
      return credential;
    },
    /** The setup session a credential opens, or null when it is unknown, revoked or expired. */
    async resolve(credential: string): Promise<string | null> {
      if (!credential.startsWith(CREDENTIAL_PREFIX) || credential.length > 128) return null;
      const found = await deps.store.repos.sshCredentials.findUsable(hashCredential(credential), clock.now());
      return found?.setupSessionId ?? null;
    },
    revokeForSession: (setupSessionId: string) => deps.store.repos.sshCredentials.revokeForSession(setupSessionId, clock.now()),
  };
}

/**
 * Hands out the gateway's SSH command for providers whose setup connection is a PTY, so every
 * provider has the "SSH command" fallback. Providers with SSH of their own keep their payload.
 */
export function createGatewayBroker(deps: {
  credentials: GatewayCredentials;
  endpoint: SshEndpoint;
  log: FastifyBaseLogger;
}): ConnectionBroker {
  return {
    async payloadFor(session, connection): Promise<ConnectionPayload> {
      const address = deps.endpoint.address;
      if (connection.type !== 'pty' || !address) return directConnectionBroker.payloadFor(session, connection);
      try {
        const credential = await deps.credentials.mint(session);
        return {
          type: 'ssh',
          command: `ssh -p ${address.port} ${credential}@${address.host}`,
          host: address.host,
          port: address.port,
          username: credential,
          token: credential,
          expiresAt: session.expiresAt,
        };
      } catch (error) {
        deps.log.warn(
          { err: error, setupSessionId: session.id },
          'could not mint an SSH gateway credential; offering the browser terminal only',
        );
        return directConnectionBroker.payloadFor(session, connection);
      }
    },
  };
}
