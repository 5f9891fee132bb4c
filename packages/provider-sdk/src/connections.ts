import type { z } from 'zod';
import type { ProviderCapabilities } from './capabilities.ts';
import type { ProviderConfig, ProviderContext, SandboxProvider } from './provider.ts';

/**
 * A provider connection as a connected provider receives it: the operator's non-secret settings
 * (an API URL, a region) and the decrypted secrets (an API key), both already parsed by the
 * factory's schemas. Never logged, never returned.
 */
export interface ProviderConnection {
  /** Sandcast's id for the connection. */
  id: string;
  config: ProviderConfig;
  secrets: ProviderConfig;
}

/** What `testConnection` found: reachable with these credentials, or why not, in words. */
export type ConnectionTest = { ok: true } | { ok: false; reason: string };

/**
 * A provider whose sandboxes live in an account Sandcast reaches with credentials (a vendor API
 * key), rather than on the Sandcast host. It is declared once and instantiated per connection:
 * the server keeps the credentials (encrypted, write-only) and hands each `connect` call the
 * connection's config and decrypted secrets. Environments of such a provider name their
 * connection, and every operation on their sandboxes is routed to the provider of that connection.
 */
export interface ConnectedProviderFactory {
  readonly id: string;
  readonly displayName: string;
  /** The environment config (image, sizes, intervals): what a sandbox is, not whose account runs it. */
  readonly configSchema: z.ZodType<ProviderConfig>;
  /** What every provider `connect` returns can do. */
  readonly capabilities: ProviderCapabilities;
  readonly runtimeKnobs: readonly string[];
  /** The non-secret half and the secret half of a connection; every field of `secrets` is stored encrypted. */
  readonly connectionSchema: { config: z.ZodType<ProviderConfig>; secrets: z.ZodType<ProviderConfig> };
  /** A provider bound to one connection. Cheap: it must not contact the vendor until an operation does. */
  connect(connection: ProviderConnection, context: ProviderContext): SandboxProvider;
  /** Checks the connection reaches the vendor and its credentials are accepted; never throws. */
  testConnection(connection: ProviderConnection): Promise<ConnectionTest>;
}
