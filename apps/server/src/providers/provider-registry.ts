import { type ConnectedProviderFactory, type SandboxProvider, secretPathsOf } from '@sandcast/provider-sdk';
import { z } from 'zod';

/** What the server knows of a provider that runs in accounts reached through connections. */
export interface ConnectionRequirement {
  factory: ConnectedProviderFactory;
  /** JSON Schemas of the connection's two halves, for forms. */
  configJsonSchema: Record<string, unknown>;
  secretsJsonSchema: Record<string, unknown>;
}

export interface RegisteredProvider {
  provider: SandboxProvider;
  /** JSON Schema of the config as a client writes it (defaults optional), for forms. */
  jsonSchema: Record<string, unknown>;
  /** Dotted paths of config fields marked secret. */
  secretPaths: string[];
  /** Set for a connected provider: its environments must name a connection of it. */
  connection?: ConnectionRequirement | undefined;
}

export interface ProviderRegistry {
  list(): RegisteredProvider[];
  get(id: string): RegisteredProvider | undefined;
  close(): Promise<void>;
}

/** A connected provider as registered: its factory, and the provider that routes to its connections. */
export interface ConnectedRegistration {
  factory: ConnectedProviderFactory;
  provider: SandboxProvider;
}

const inputSchemaOf = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;

/** Indexes providers by id and derives what the server needs from their config schemas once. */
export function createProviderRegistry(providers: SandboxProvider[], connected: ConnectedRegistration[] = []): ProviderRegistry {
  const byId = new Map<string, RegisteredProvider>();
  const add = (provider: SandboxProvider, connection?: ConnectionRequirement) => {
    if (byId.has(provider.id)) throw new Error(`two providers registered with id ${provider.id}`);
    const jsonSchema = inputSchemaOf(provider.configSchema);
    byId.set(provider.id, { provider, jsonSchema, secretPaths: secretPathsOf(jsonSchema), connection });
  };
  for (const provider of providers) add(provider);
  for (const { factory, provider } of connected) {
    add(provider, {
      factory,
      configJsonSchema: inputSchemaOf(factory.connectionSchema.config),
      secretsJsonSchema: inputSchemaOf(factory.connectionSchema.secrets),
    });
  }
  return {
    list: () => [...byId.values()],
    get: (id) => byId.get(id),
    close: async () => {
      await Promise.all([...byId.values()].map((r) => r.provider.close?.()));
    },
  };
}
