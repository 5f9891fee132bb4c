import path from 'node:path';
import type { Writable } from 'node:stream';
import { createDb, createStore, type Store } from '@sandcast/db';
import type { ConnectedProviderFactory, SandboxProvider } from '@sandcast/provider-sdk';
import type { FastifyInstance } from 'fastify';
import { type AppDeps, type AppServices, buildApp, type RouteEntry } from './app.ts';
import type { Clock } from './clock.ts';
import { assertBindAllowed, type ServerConfig } from './config.ts';
import { secureDataDir, tightenDataDir } from './data-dir.ts';
import type { EgressResolver } from './egress/egress-proxy.ts';
import { instrumentProvider } from './metrics/instrument-providers.ts';
import { createMetrics } from './metrics/metrics.ts';
import { createConnectionRouter } from './providers/connection-router.ts';
import { createConnectionSource } from './providers/connection-source.ts';
import { defaultConnectedProviders, defaultProviders } from './providers/default-providers.ts';
import { createProviderRegistry, type ProviderRegistry } from './providers/provider-registry.ts';
import { createReconciler, type Reconciler } from './reconcilers/reconciler.ts';
import { createSecretBox, loadSecretKey } from './services/secrets.ts';
import { createSshGateway, type SshGateway } from './ssh-gateway/ssh-gateway.ts';
import { loadGatewayHostKey } from './ssh-gateway/ssh-keys.ts';

export interface RunningServer {
  app: FastifyInstance;
  services: AppServices;
  /** Every registered route with its declared access. */
  routes: RouteEntry[];
  store: Store;
  providers: ProviderRegistry;
  reconciler: Reconciler;
  /** http://host:port the server listens on. */
  url: string;
  /** Where the SSH gateway listens (port 0 resolved), or null when SANDCAST_SSH_PORT=off. */
  sshGateway: { host: string; port: number } | null;
  /** Stops accepting, lets in-flight requests finish, then closes the database and providers. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Providers to offer instead of the configured defaults. */
  providers?: SandboxProvider[] | undefined;
  /** Connected providers (instantiated per provider connection) instead of the defaults (Daytona). */
  connectedProviders?: ConnectedProviderFactory[] | undefined;
  /** An already-open store (tests); default: open the configured database. The server closes it. */
  store?: Store | undefined;
  /** Where structured logs go; default stdout. */
  logStream?: Writable | undefined;
  /** The time source for expiries; default the system clock. */
  clock?: Clock | undefined;
  /** How the egress proxy resolves names; default the system resolver (tests map names to a test network). */
  egressResolver?: EgressResolver | undefined;
  /** Called after the routes are registered and before listening (tests add routes here). */
  beforeListen?: ((app: FastifyInstance) => void) | undefined;
  /** The host bridge's upstreams and tuning (tests: a loopback upstream, short waits, hooks). */
  bridge?: AppDeps['bridge'];
  /** How long after a claim the pool's refill starts; default REFILL_AFTER_CLAIM_DELAY_MS (benchmarks compare). */
  refillDelayMs?: number | undefined;
}

/** Opens the database (migrating it), builds the app and listens. */
export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  assertBindAllowed(config);
  // Before the embedded database creates a single file.
  await secureDataDir(config.dataDir);
  const store =
    options.store ??
    createStore(await createDb(config.databaseUrl ? { url: config.databaseUrl } : { pglite: path.join(config.dataDir, 'db') }));
  await tightenDataDir(config.dataDir);
  const metrics = createMetrics({ store });
  const secrets = await loadSecretKey({ dataDir: config.dataDir, configured: config.secretKey }).then(createSecretBox, async (error) => {
    await store.close();
    throw error;
  });
  const source = createConnectionSource({ store, secrets });
  const providers = createProviderRegistry(
    (options.providers ?? defaultProviders(config)).map((p) => instrumentProvider(p, metrics)),
    (options.connectedProviders ?? defaultConnectedProviders()).map((factory) => ({
      factory,
      provider: instrumentProvider(createConnectionRouter(factory, { source, context: { dataDir: config.dataDir } }), metrics),
    })),
  );
  let sshGateway: SshGateway | null = null;
  try {
    const { app, services, routes } = buildApp({
      config,
      store,
      providers,
      secrets,
      logStream: options.logStream,
      clock: options.clock,
      metrics,
      bridge: options.bridge,
      egressResolver: options.egressResolver,
    });
    options.beforeListen?.(app);
    if (config.deploymentMode === 'authenticated') {
      const file = await services.apiKeys.bootstrapAdminKey(config.dataDir);
      if (file) app.log.warn({ file }, 'no API keys existed: created an admin key and wrote it to this file (mode 0600)');
    }
    // Before anything else runs, so a port in use fails the start cleanly.
    if (config.sshPort !== null) {
      const gateway = createSshGateway({
        hostKey: (await loadGatewayHostKey(config.dataDir)).privateKey,
        credentials: services.sshCredentials,
        setupSessions: services.setupSessions,
        // With the egress proxy's variables for setup sandboxes that have it.
        providers: services.providers,
        events: services.setupSessions.events,
        log: app.log,
        clock: options.clock,
        maxChannelsPerConnection: config.sshMaxChannelsPerConnection,
      });
      sshGateway = gateway;
      services.sshEndpoint.address = await gateway.listen(config.sshHost, config.sshPort);
      app.addHook('preClose', () => gateway.close());
    }
    const reconciler = createReconciler({
      store,
      providers,
      setupSessions: services.setupSessions,
      lifecycle: services.sandboxLifecycle,
      sweepCheckpoints: () => services.checkpoints.sweep(),
      log: app.log,
      intervalMs: config.reconcileIntervalMs,
      clock: options.clock,
      metrics,
      warmPools: services.sandboxes.pools,
      refillDelayMs: options.refillDelayMs,
    });
    await reconciler.start();
    app.addHook('preClose', async () => {
      await reconciler.stop();
    });
    const address = await app.listen({ host: config.host, port: config.port });
    services.listening.port = new URL(address).port ? Number(new URL(address).port) : config.port;
    app.log.info({ address, database: store.kind, deploymentMode: config.deploymentMode }, 'sandcast listening');
    // Bridges of sessions a previous process served come back (their tokens died with it).
    void services.sessions
      .resumeBridges()
      .catch((error: unknown) => app.log.warn({ err: error }, 'the sandbox bridges could not be resumed'));
    let closing: Promise<void> | null = null;
    return {
      app,
      services,
      routes,
      store,
      providers,
      reconciler,
      url: address,
      sshGateway: services.sshEndpoint.address,
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
    await sshGateway?.close();
    await providers.close();
    await store.close();
    throw error;
  }
}
