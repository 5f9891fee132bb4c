import path from 'node:path';
import { createDb, createStore, type Store } from '@sandcast/db';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyInstance } from 'fastify';
import { type AppServices, buildApp } from './app.ts';
import { assertBindAllowed, type ServerConfig } from './config.ts';
import { defaultProviders } from './providers/default-providers.ts';
import { createProviderRegistry, type ProviderRegistry } from './providers/provider-registry.ts';
import { createSecretBox, loadSecretKey } from './services/secrets.ts';

export interface RunningServer {
  app: FastifyInstance;
  services: AppServices;
  store: Store;
  providers: ProviderRegistry;
  /** http://host:port the server listens on. */
  url: string;
  /** Stops accepting, lets in-flight requests finish, then closes the database and providers. */
  close(): Promise<void>;
}

/** Opens the database (migrating it), builds the app and listens. */
export async function startServer(config: ServerConfig, options: { providers?: SandboxProvider[] } = {}): Promise<RunningServer> {
  assertBindAllowed(config);
  const database = await createDb(config.databaseUrl ? { url: config.databaseUrl } : { pglite: path.join(config.dataDir, 'db') });
  const store = createStore(database);
  const providers = createProviderRegistry(options.providers ?? defaultProviders(config));
  try {
    const secrets = createSecretBox(await loadSecretKey({ dataDir: config.dataDir, configured: config.secretKey }));
    const { app, services } = buildApp({ config, store, providers, secrets });
    if (config.deploymentMode === 'authenticated') {
      const file = await services.apiKeys.bootstrapAdminKey(config.dataDir);
      if (file) app.log.warn({ file }, 'no API keys existed: created an admin key and wrote it to this file (mode 0600)');
    }
    const address = await app.listen({ host: config.host, port: config.port });
    app.log.info({ address, database: store.kind, deploymentMode: config.deploymentMode }, 'sandcast listening');
    let closing: Promise<void> | null = null;
    return {
      app,
      services,
      store,
      providers,
      url: address,
      close: () => {
        closing ??= (async () => {
          await app.close();
          await providers.close();
          await store.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await providers.close();
    await store.close();
    throw error;
  }
}
