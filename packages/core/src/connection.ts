/**
 * A provider connection: the account a connected provider (Daytona) runs sandboxes in. `config`
 * holds the non-secret settings; `secrets` holds every credential sealed (the server encrypts
 * each value before storing it and never returns one).
 */
export interface Connection {
  id: string;
  name: string;
  provider: string;
  config: Record<string, unknown>;
  secrets: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** Connection names: what an operator types on a command line. */
export const CONNECTION_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;
