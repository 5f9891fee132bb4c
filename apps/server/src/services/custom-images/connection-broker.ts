import type { ConnectionPayload } from '@sandcast/contracts';
import type { SetupSession } from '@sandcast/core';
import type { SetupConnection } from '@sandcast/provider-sdk';

/**
 * Turns a provider's connection into what a client is handed. The terminal/SSH layer replaces
 * the direct broker to hand out its own credentials.
 */
export interface ConnectionBroker {
  payloadFor(session: SetupSession, connection: SetupConnection): ConnectionPayload | Promise<ConnectionPayload>;
}

/** Hands the provider's own connection to the client, with the session's expiry. */
export const directConnectionBroker = {
  payloadFor: (session: SetupSession, connection: SetupConnection): ConnectionPayload =>
    connection.type === 'pty'
      ? { type: 'pty', expiresAt: session.expiresAt }
      : { ...connection, expiresAt: connection.expiresAt ?? session.expiresAt },
};

/** What is stored about a connection: never a credential. */
export function summarizeConnection(connection: SetupConnection): Record<string, unknown> {
  return connection.type === 'pty' ? { type: 'pty' } : { type: 'ssh', host: connection.host, port: connection.port };
}
