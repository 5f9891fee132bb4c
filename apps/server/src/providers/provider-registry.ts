import { type SandboxProvider, secretPathsOf } from '@sandcast/provider-sdk';
import { z } from 'zod';

export interface RegisteredProvider {
  provider: SandboxProvider;
  /** JSON Schema of the config as a client writes it (defaults optional), for forms. */
  jsonSchema: Record<string, unknown>;
  /** Dotted paths of config fields marked secret. */
  secretPaths: string[];
}

export interface ProviderRegistry {
  list(): RegisteredProvider[];
  get(id: string): RegisteredProvider | undefined;
  close(): Promise<void>;
}

/** Indexes providers by id and derives what the server needs from their config schemas once. */
export function createProviderRegistry(providers: SandboxProvider[]): ProviderRegistry {
  const byId = new Map<string, RegisteredProvider>();
  for (const provider of providers) {
    if (byId.has(provider.id)) throw new Error(`two providers registered with id ${provider.id}`);
    const jsonSchema = z.toJSONSchema(provider.configSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    byId.set(provider.id, { provider, jsonSchema, secretPaths: secretPathsOf(jsonSchema) });
  }
  return {
    list: () => [...byId.values()],
    get: (id) => byId.get(id),
    close: async () => {
      await Promise.all([...byId.values()].map((r) => r.provider.close?.()));
    },
  };
}
