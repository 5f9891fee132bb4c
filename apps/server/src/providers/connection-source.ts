import type { Connection } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { ProviderConnection } from '@sandcast/provider-sdk';
import { openConfig } from '../services/config-secrets.ts';
import type { SecretBox } from '../services/secrets.ts';

/** A connection with its secrets decrypted, for handing to a provider only. */
export interface OpenConnection extends ProviderConnection {
  provider: string;
  /** Changes when the connection is edited: a provider built from an older version is rebuilt. */
  version: string;
}

/** Where connected providers find their connections. Never returns a sealed or masked secret. */
export interface ConnectionSource {
  get(id: string): Promise<OpenConnection | null>;
  list(provider: string): Promise<OpenConnection[]>;
  /** The connection an environment names, or null. */
  connectionOfEnvironment(environmentId: string): Promise<string | null>;
}

export function openConnection(connection: Connection, secrets: SecretBox): OpenConnection {
  return {
    id: connection.id,
    provider: connection.provider,
    config: connection.config,
    secrets: openConfig(connection.secrets, secrets),
    version: connection.updatedAt,
  };
}

export function createConnectionSource(deps: { store: Store; secrets: SecretBox }): ConnectionSource {
  return {
    async get(id) {
      const connection = await deps.store.repos.connections.get(id);
      return connection ? openConnection(connection, deps.secrets) : null;
    },
    async list(provider) {
      return (await deps.store.repos.connections.list(provider)).map((c) => openConnection(c, deps.secrets));
    },
    async connectionOfEnvironment(environmentId) {
      return (await deps.store.repos.environments.get(environmentId))?.connectionId ?? null;
    },
  };
}
