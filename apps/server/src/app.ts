import type { Writable } from 'node:stream';
import type { RouteAccess } from '@sandcast/core';
import { SandcastError } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, LogController } from 'fastify';
import { type BridgeServiceOptions, createBridgeService } from './bridge/bridge.service.ts';
import type { Inject, ResolvedUpstream } from './bridge/bridge-forwarder.ts';
import type { Clock } from './clock.ts';
import type { ServerConfig } from './config.ts';
import { registerAccessControl } from './http/auth.ts';
import { registerErrorHandling, toErrorResponse } from './http/error-handler.ts';
import { registerHostGuard } from './http/host-guard.ts';
import { createSessionTools } from './http/session-tools.ts';
import { registerWebUi } from './http/web-ui.ts';
import './http/fastify-types.ts';
import { createCheckpointsService } from './checkpoints/checkpoints.service.ts';
import { type CheckpointStorage, createCheckpointStorage } from './checkpoints/storage.ts';
import { createEgressService } from './egress/egress.service.ts';
import { withEgressEnv } from './egress/egress-providers.ts';
import type { EgressResolver } from './egress/egress-proxy.ts';
import type { RunningExecs } from './http/exec-reply.ts';
import { registerRequestLogging } from './http/request-logging.ts';
import type { RouteEntry } from './http/route-entry.ts';
import { registerActivityRoutes } from './http/routes/activity.routes.ts';
import { registerAgentRoutes } from './http/routes/agents.routes.ts';
import { registerApiDocsRoutes } from './http/routes/api-docs.routes.ts';
import { registerAuthSessionRoutes } from './http/routes/auth-session.routes.ts';
import { registerBaseImageRoutes } from './http/routes/base-images.routes.ts';
import { registerBridgeUpstreamRoutes } from './http/routes/bridge-upstreams.routes.ts';
import { registerCheckpointRoutes } from './http/routes/checkpoints.routes.ts';
import { registerConnectionRoutes } from './http/routes/connections.routes.ts';
import { registerCustomImageRoutes } from './http/routes/custom-images.routes.ts';
import { registerEnvironmentRoutes } from './http/routes/environments.routes.ts';
import { registerFleetRoutes } from './http/routes/fleet.routes.ts';
import { registerHealthRoutes } from './http/routes/health.routes.ts';
import { registerKeyRoutes } from './http/routes/keys.routes.ts';
import { registerMcpRoutes } from './http/routes/mcp.routes.ts';
import { registerMetricsRoutes, registerRequestTiming } from './http/routes/metrics.routes.ts';
import { registerPortRoutes } from './http/routes/ports.routes.ts';
import { registerSandboxLifecycleRoutes } from './http/routes/sandbox-lifecycle.routes.ts';
import { registerSandboxRoutes } from './http/routes/sandboxes.routes.ts';
import { registerSessionRoutes } from './http/routes/sessions.routes.ts';
import { registerSettingsRoutes } from './http/routes/settings.routes.ts';
import { registerTargetRoutes } from './http/routes/targets.routes.ts';
import { registerTerminalRoutes } from './http/routes/terminal.routes.ts';
import { createMetrics, type Metrics } from './metrics/metrics.ts';
import { PortConnections } from './ports/port-connections.ts';
import type { PortHostPolicy } from './ports/port-hosts.ts';
import { installPortProxy } from './ports/port-proxy.ts';
import type { ProviderRegistry } from './providers/provider-registry.ts';
import { createAgentsService } from './services/agents.service.ts';
import { createApiKeysService } from './services/api-keys.service.ts';
import { createBaseImagesService } from './services/base-images.service.ts';
import { createBootSourceChanges } from './services/boot-source-changes.ts';
import { createBridgeUpstreamsService } from './services/bridge-upstreams.service.ts';
import { createConnectionsService } from './services/connections.service.ts';
import { createCustomImagesService } from './services/custom-images/custom-images.service.ts';
import { SetupEvents } from './services/custom-images/setup-events.ts';
import { createSetupSessionsService } from './services/custom-images/setup-sessions.service.ts';
import { createEnvironmentContextLoader } from './services/environment-context.ts';
import { createEnvironmentsService } from './services/environments.service.ts';
import { createFleetOverview } from './services/fleet-overview.ts';
import { createPortsService } from './services/ports.service.ts';
import { createSandboxLifecycle } from './services/sandbox-lifecycle.ts';
import { createSandboxRecovery } from './services/sandbox-recovery.ts';
import { createSandboxesService } from './services/sandboxes.service.ts';
import type { SecretBox } from './services/secrets.ts';
import { createFleetService } from './services/sessions/fleet.service.ts';
import { createSessionsService } from './services/sessions/sessions.service.ts';
import { createSettingsService } from './services/settings.service.ts';
import { createUiSessionsService } from './services/ui-sessions.service.ts';
import { createGatewayBroker, createGatewayCredentials, type SshEndpoint } from './ssh-gateway/gateway-credentials.ts';
import { sshClientIdentity } from './ssh-gateway/ssh-keys.ts';
import { serializeErrorForLog, serializeRequestForLog } from './terminal/request-log.ts';
import { createTerminalHub } from './terminal/terminal-hub.ts';
import { createTerminalTokensService } from './terminal/terminal-tokens.service.ts';
import { SANDCAST_VERSION } from './version.ts';

export interface AppDeps {
  config: ServerConfig;
  store: Store;
  providers: ProviderRegistry;
  secrets: SecretBox;
  /** Where structured logs go; default stdout. */
  logStream?: Writable | undefined;
  /** The time source for expiries; default the system clock (tests move it). */
  clock?: Clock | undefined;
  /** Where metrics are recorded (`GET /metrics`); default a registry of this app's own. */
  metrics?: Metrics | undefined;
  /** The checkpoint engine and its blob store; default the data dir's (or SANDCAST_CHECKPOINT_STORE_URL's). */
  checkpointStorage?: CheckpointStorage | undefined;
  /** The host bridge's upstreams (`/upstreams/<name>/...` from inside a sandbox) and tuning. */
  bridge?: { upstreams?: (() => Promise<ResolvedUpstream[]>) | undefined; options?: BridgeServiceOptions | undefined } | undefined;
  /** How the egress proxy resolves names; default the system resolver (tests map names to a test network). */
  egressResolver?: EgressResolver | undefined;
}

export type { RouteEntry } from './http/route-entry.ts';

/** Largest accepted request body. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Wires services and routes into a Fastify instance (not yet listening). */
export function buildApp(deps: AppDeps): { app: FastifyInstance; services: AppServices; routes: RouteEntry[] } {
  const app = Fastify({
    logger: {
      level: deps.config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["sec-websocket-protocol"]'], censor: '[redacted]' },
      serializers: { req: serializeRequestForLog, err: serializeErrorForLog },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    bodyLimit: BODY_LIMIT_BYTES,
    // Written by registerRequestLogging at debug instead of info.
    logController: new LogController({ disableRequestLogging: true }),
    // Let in-flight requests finish on close, but drop idle keep-alive sockets at once.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // A path the router cannot decode (broken percent-encoding) in the usual envelope.
    frameworkErrors: (error, _request, reply) => {
      const bad = error.code === 'FST_ERR_BAD_URL';
      const { status, body } = toErrorResponse(
        bad
          ? new SandcastError('bad_request', 'the URL path is not valid UTF-8 percent-encoding; encode text as UTF-8 and escape "%" as %25')
          : error,
      );
      void (reply as FastifyReply).status(status).send(body);
    },
  });

  const metrics = deps.metrics ?? createMetrics({ store: deps.store });
  const services = createServices(deps, app.log, metrics, { inject: async (request) => app.inject(request) });
  // Sandbox ports are answered before Fastify routes anything (their own host names).
  installPortProxy(app.server, {
    hosts: services.portHosts,
    ports: services.ports,
    secrets: deps.secrets,
    connections: services.portConnections,
    authenticate: (key) => services.apiKeys.authenticate(key),
    log: app.log,
    clock: deps.clock,
  });
  app.addHook('preClose', async () => services.portConnections.closeEverything());
  app.addHook('onClose', async () => services.egress.close());
  const routes: RouteEntry[] = [];
  app.addHook('onRoute', (route) => {
    const { access, feature } = route.config ?? {};
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, access: access as RouteAccess, feature });
  });
  registerErrorHandling(app);
  registerRequestLogging(app);
  registerRequestTiming(app, { metrics });
  registerDrainOnClose(app);
  registerHostGuard(app, {
    mode: deps.config.deploymentMode,
    allowedHosts: deps.config.allowedHosts,
    publicUrl: deps.config.publicUrl,
  });
  registerAccessControl(app, {
    mode: deps.config.deploymentMode,
    apiKeys: services.apiKeys,
    settings: services.settings,
    uiSessions: services.uiSessions,
    bridgeTickets: services.bridges.tickets,
  });
  app.addHook('preClose', async () => services.bridges.closeAll());
  registerAuthSessionRoutes(app, { mode: deps.config.deploymentMode, uiSessions: services.uiSessions });
  registerHealthRoutes(app, { version: SANDCAST_VERSION, database: deps.store.kind, mode: deps.config.deploymentMode });
  registerSettingsRoutes(app, services);
  registerEnvironmentRoutes(app, services);
  registerTargetRoutes(app, deps);
  registerConnectionRoutes(app, services);
  registerBridgeUpstreamRoutes(app, services);
  registerActivityRoutes(app, deps);
  registerKeyRoutes(app, services);
  const runningExecs: RunningExecs = new Set();
  // A streamed command outlives no server: stop them so close does not wait on their answers.
  app.addHook('preClose', async () => {
    await Promise.all([...runningExecs].map((running) => running.kill().catch(() => undefined)));
  });
  registerCustomImageRoutes(app, { ...services, runningExecs });
  registerSandboxRoutes(app, { ...services, runningExecs });
  registerSandboxLifecycleRoutes(app, services);
  registerAgentRoutes(app, services);
  registerSessionRoutes(app, { ...services, runningExecs });
  registerFleetRoutes(app, services);
  registerMcpRoutes(app, services);
  registerCheckpointRoutes(app, services);
  registerPortRoutes(app, services);
  registerBaseImageRoutes(app, services);
  registerTerminalRoutes(app, { ...services, authTimeoutMs: deps.config.terminalAuthTimeoutMs });
  registerApiDocsRoutes(app, { routes, version: SANDCAST_VERSION });
  registerMetricsRoutes(app, { metrics });
  registerWebUi(app, { distDir: deps.config.webDistDir });
  return { app, services, routes };
}

/**
 * While closing, answers carry `Connection: close`, so a keep-alive socket whose request was in
 * flight when shutdown began is closed right after its answer instead of holding the close open.
 */
/** How long in-flight requests get to finish once the server closes; then their connections are cut. */
const DRAIN_DEADLINE_MS = 10_000;

function registerDrainOnClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    // A connection still open after the grace period (a client that vanished mid-request, whose
    // socket never said so) is cut, so closing the server never hangs on it.
    const deadline = setTimeout(() => app.server.closeAllConnections(), DRAIN_DEADLINE_MS);
    deadline.unref();
    app.server.once('close', () => clearTimeout(deadline));
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
  });
}

export type AppServices = ReturnType<typeof createServices>;

function createServices(deps: AppDeps, log: FastifyBaseLogger, metrics: Metrics, bridge: { inject: Inject }) {
  const { store } = deps;
  const settings = createSettingsService({ store });
  const egress = createEgressService({
    store,
    allowPrivateHosts: async () => (await settings.get()).egress.allowPrivateHosts,
    metrics,
    log,
    resolve: deps.egressResolver,
    clock: deps.clock,
  });
  // Every exec and PTY of a sandbox with egress gets the proxy variables, whoever calls.
  const providers = withEgressEnv(deps.providers, egress);
  const bridgeUpstreams = createBridgeUpstreamsService({ store, secrets: deps.secrets, log });
  const bridges = createBridgeService({
    providers,
    settings,
    inject: bridge.inject,
    // The configured upstreams unless the caller supplies its own (tests do).
    upstreams: deps.bridge?.upstreams ?? (() => bridgeUpstreams.resolved()),
    log,
    recorder: metrics.bridge,
    options: deps.bridge?.options,
  });
  settings.onUpdated((next) => bridges.applySettings(next));
  const policy = async () => ({
    mode: deps.config.deploymentMode,
    allowHostNetwork: (await settings.get()).security.allowHostNetwork,
  });
  // What an environment boots from changed here: the claim's boot-target cache forgets it (ADR 0035).
  const bootSources = createBootSourceChanges();
  const bootSourceChanged = (environmentId: string) => bootSources.changed(environmentId);
  // A settings change can move the boot policy of every environment.
  settings.onUpdated(() => bootSources.changed(null));
  const environments = createEnvironmentsService({ store, providers, secrets: deps.secrets, policy, bootSourceChanged });
  const loadEnvironment = createEnvironmentContextLoader({ environments, providers, policy });
  const events = new SetupEvents();
  const sshEndpoint: SshEndpoint = { address: null };
  const sshCredentials = createGatewayCredentials({ store, clock: deps.clock });
  /** The port the server listens on, once it does (server.ts sets it): port URLs name it. */
  const listening: { port: number | null } = { port: null };
  const portHosts: PortHostPolicy = {
    baseDomain: deps.config.portsBaseDomain,
    scheme: deps.config.portsUrlScheme,
    portSuffix: () => {
      if (deps.config.publicUrl) {
        const { port } = new URL(deps.config.publicUrl);
        return port ? `:${port}` : '';
      }
      return `:${listening.port ?? deps.config.port}`;
    },
  };
  const portConnections = new PortConnections();
  const ports = createPortsService({
    store,
    providers,
    settings,
    secrets: deps.secrets,
    hosts: portHosts,
    connections: portConnections,
    clock: deps.clock,
  });
  const setupSessions = createSetupSessionsService({
    store,
    providers,
    loadEnvironment,
    events,
    log,
    clock: deps.clock,
    broker: createGatewayBroker({ credentials: sshCredentials, endpoint: sshEndpoint, log }),
    execOutputMaxBytes: deps.config.execOutputMaxBytes,
    closePorts: (sessionId) => ports.closeAllOf({ kind: 'setup', id: sessionId }),
    egress,
    bootSourceChanged,
  });
  const terminalTokens = createTerminalTokensService({ store, setupSessions, clock: deps.clock });
  const apiKeys = createApiKeysService({ store });
  const storage = deps.checkpointStorage ?? createCheckpointStorage(deps.config);
  const checkpoints = createCheckpointsService({ store, providers, ...storage, settings, log, clock: deps.clock });
  const sandboxLifecycle = createSandboxLifecycle({
    store,
    providers,
    log,
    clock: deps.clock,
    closePorts: async (sandboxId) => {
      await bridges.forget(sandboxId);
      await ports.closeAllOf({ kind: 'sandbox', id: sandboxId });
    },
    egress,
    bridge: bridges,
    checkpointBeforeIdleStop: (sandbox, actor) => checkpoints.take(sandbox, 'idle', actor),
  });
  const recovery = createSandboxRecovery({
    store,
    providers,
    secrets: deps.secrets,
    lifecycle: sandboxLifecycle,
    checkpoints,
    log,
    egress,
    bridge: bridges,
  });
  const terminalHub = createTerminalHub({
    providers,
    setupSessions,
    events,
    tokens: terminalTokens,
    log,
    clock: deps.clock,
    sshIdentity: sshClientIdentity(deps.config.dataDir),
  });
  const sandboxes = createSandboxesService({
    store,
    providers,
    loadEnvironment,
    log,
    lifecycle: sandboxLifecycle,
    execOutputMaxBytes: deps.config.execOutputMaxBytes,
    clock: deps.clock,
    maxSandboxes: deps.config.maxSandboxes,
    recovery,
    bridgeEnv: (sandboxId) => bridges.env(sandboxId),
    egress,
    bootSources,
  });
  const sessions = createSessionsService({
    store,
    providers,
    secrets: deps.secrets,
    settings,
    policy,
    sandboxes,
    log,
    clock: deps.clock,
    terminals: terminalHub,
    bridges,
    egress,
  });
  return {
    providers,
    egress,
    checkpoints,
    bridges,
    bridgeUpstreams,
    listening,
    portHosts,
    portConnections,
    ports,
    settings,
    environments,
    connections: createConnectionsService({ store, providers, secrets: deps.secrets }),
    apiKeys,
    uiSessions: createUiSessionsService({ store, apiKeys, ttlMs: deps.config.uiSessionTtlMs, clock: deps.clock }),
    setupSessions,
    sshEndpoint,
    sshCredentials,
    terminalTokens,
    terminalHub,
    customImages: createCustomImagesService({ store, loadEnvironment, setupSessions, log, bootSourceChanged }),
    sandboxes,
    agents: createAgentsService({ store }),
    sessions,
    sessionTools: createSessionTools({
      sessions,
      sandboxes,
      checkpoints,
      fleet: createFleetService({ store, providers, secrets: deps.secrets, settings, policy, sessions, sandboxes, checkpoints, log }),
    }),
    fleetOverview: createFleetOverview({ store, clock: deps.clock }),
    sandboxLifecycle,
    baseImages: createBaseImagesService({
      store,
      providers,
      dataDir: deps.config.dataDir,
      maxImportBytes: deps.config.imageImportMaxBytes,
      log,
    }),
  };
}
