import {
  type CapturedTemplate,
  type ConnectedProviderFactory,
  type ManagedInstance,
  type ProviderContext,
  ProviderError,
  type SandboxProvider,
  type TemplateRef,
} from '@sandcast/provider-sdk';
import type { ConnectionSource } from './connection-source.ts';

/** Joins a connection id and the vendor's own id: every instance, lease and template names its connection. */
const SEPARATOR = '~';

const join = (connectionId: string, inner: string) => `${connectionId}${SEPARATOR}${inner}`;

/**
 * A connected provider as one `SandboxProvider`: each operation goes to the provider built for
 * the connection it concerns — the environment's connection for create and setup, the connection
 * named in the instance id (`<connectionId>~<vendor id>`) for the rest. Providers are built on
 * first use and rebuilt when their connection is edited. Services see an ordinary provider.
 */
export function createConnectionRouter(
  factory: ConnectedProviderFactory,
  deps: { source: ConnectionSource; context: ProviderContext },
): SandboxProvider {
  const built = new Map<string, { version: string; provider: SandboxProvider }>();

  const providerOf = async (connectionId: string): Promise<SandboxProvider> => {
    const connection = await deps.source.get(connectionId);
    if (!connection || connection.provider !== factory.id) {
      throw new ProviderError({
        provider: factory.id,
        code: 'unavailable',
        message: `the ${factory.displayName} connection ${connectionId} no longer exists; create one under Settings → Connections and point the environment at it`,
      });
    }
    const cached = built.get(connectionId);
    if (cached?.version === connection.version) return cached.provider;
    await cached?.provider.close?.().catch(() => undefined);
    const provider = factory.connect(connection, deps.context);
    built.set(connectionId, { version: connection.version, provider });
    return provider;
  };

  const split = (id: string): { connectionId: string; inner: string } => {
    const at = id.indexOf(SEPARATOR);
    if (at <= 0) throw new ProviderError({ provider: factory.id, code: 'not_found', message: `${id} is not a ${factory.displayName} id` });
    return { connectionId: id.slice(0, at), inner: id.slice(at + 1) };
  };

  /** Runs `op` on the provider of the connection an id names, with the vendor's own id. */
  const routed = async <T>(id: string, op: (provider: SandboxProvider, inner: string) => Promise<T>): Promise<T> => {
    const { connectionId, inner } = split(id);
    return op(await providerOf(connectionId), inner);
  };

  const ofEnvironment = async (environmentId: string): Promise<{ connectionId: string; provider: SandboxProvider }> => {
    const connectionId = await deps.source.connectionOfEnvironment(environmentId);
    if (!connectionId) {
      throw new ProviderError({
        provider: factory.id,
        code: 'invalid_config',
        message: `the environment names no ${factory.displayName} connection; edit it and choose one (connectionId)`,
      });
    }
    return { connectionId, provider: await providerOf(connectionId) };
  };

  /** A template of this connection, with the vendor's own reference. */
  const innerTemplate = (template: TemplateRef | null | undefined, connectionId: string): TemplateRef | null => {
    if (!template) return null;
    const { connectionId: owner, inner } = split(template.ref);
    if (owner !== connectionId) {
      throw new ProviderError({
        provider: factory.id,
        code: 'not_found',
        message: `the captured image was made with connection ${owner}, not the environment's connection ${connectionId}; capture a new one`,
      });
    }
    return { ...template, ref: inner };
  };

  const optional = <K extends 'stop' | 'start' | 'archive' | 'listChanges'>(name: K) =>
    (async (id: string) =>
      routed(id, async (provider, inner) => {
        const op = provider[name] as ((id: string) => Promise<never>) | undefined;
        if (!op)
          throw new ProviderError({ provider: factory.id, code: 'unsupported', message: `${factory.displayName} does not offer ${name}` });
        return op.call(provider, inner);
      })) as NonNullable<SandboxProvider[K]>;

  return {
    id: factory.id,
    displayName: factory.displayName,
    configSchema: factory.configSchema,
    capabilities: factory.capabilities,
    runtimeKnobs: factory.runtimeKnobs,

    async availability() {
      const connections = await deps.source.list(factory.id);
      if (connections.length === 0) {
        return {
          available: false,
          reason: `no connection: add a ${factory.displayName} connection under Settings → Connections (POST /api/connections) first`,
        };
      }
      return { available: true };
    },

    async create(request) {
      const { connectionId, provider } = await ofEnvironment(request.environmentId);
      const created = await provider.create({ ...request, template: innerTemplate(request.template, connectionId) });
      return { instanceId: join(connectionId, created.instanceId) };
    },
    inspect: async (id) => {
      try {
        return await routed(id, (p, inner) => p.inspect(inner));
      } catch (error) {
        if (error instanceof ProviderError && error.code === 'not_found') return { status: 'missing' };
        throw error;
      }
    },
    exec: (id, request) => routed(id, (p, inner) => p.exec(inner, request)),
    execStream: (id, request) => routed(id, (p, inner) => p.execStream(inner, request)),
    openPty: (id, options) => routed(id, (p, inner) => p.openPty(inner, options)),
    readFile: (id, path) => routed(id, (p, inner) => p.readFile(inner, path)),
    writeFile: (id, path, data, options) => routed(id, (p, inner) => p.writeFile(inner, path, data, options)),
    exportWorkspace: (id, path) => routed(id, (p, inner) => p.exportWorkspace(inner, path)),
    importWorkspace: (id, tar, path) => routed(id, (p, inner) => p.importWorkspace(inner, tar, path)),
    destroy: (id) => routed(id, (p, inner) => p.destroy(inner)),
    stop: optional('stop'),
    start: optional('start'),
    archive: optional('archive'),

    /** What every connection holds; a connection that cannot answer (a revoked key) is left out, not fatal to the others. */
    async listInstances() {
      const found: ManagedInstance[] = [];
      const connections = await deps.source.list(factory.id);
      const failures: Error[] = [];
      for (const connection of connections) {
        try {
          const instances = await (await providerOf(connection.id)).listInstances();
          found.push(...instances.map((i) => ({ ...i, instanceId: join(connection.id, i.instanceId) })));
        } catch (error) {
          failures.push(error as Error);
        }
      }
      if (connections.length > 0 && failures.length === connections.length) throw failures[0];
      return found;
    },

    async listCapturedTemplates() {
      const found: CapturedTemplate[] = [];
      for (const connection of await deps.source.list(factory.id)) {
        const provider = await providerOf(connection.id);
        for (const t of (await provider.listCapturedTemplates?.()) ?? []) {
          found.push({
            ...t,
            template: { ...t.template, ref: join(connection.id, t.template.ref) },
            refs: t.refs.map((r) => join(connection.id, r)),
          });
        }
      }
      return found;
    },

    async startInteractiveSetup(request) {
      const { connectionId, provider } = await ofEnvironment(request.environmentId);
      const lease = await provider.startInteractiveSetup({ ...request, source: innerTemplate(request.source, connectionId) });
      return { ...lease, leaseId: join(connectionId, lease.leaseId) };
    },
    getInteractiveSetup: async (id) => {
      try {
        return await routed(id, (p, inner) => p.getInteractiveSetup(inner));
      } catch (error) {
        if (error instanceof ProviderError && error.code === 'not_found') return { status: 'missing' };
        throw error;
      }
    },
    captureTemplate: (request) =>
      routed(request.leaseId, async (p, inner) => {
        const template = await p.captureTemplate({ ...request, leaseId: inner });
        return { ...template, ref: join(split(request.leaseId).connectionId, template.ref) };
      }),
    cancelInteractiveSetup: (id) => routed(id, (p, inner) => p.cancelInteractiveSetup(inner)),
    deleteTemplate: (template) => routed(template.ref, (p, inner) => p.deleteTemplate({ ...template, ref: inner })),
    listChanges: optional('listChanges'),

    async close() {
      const providers = [...built.values()].map((b) => b.provider);
      built.clear();
      await Promise.all(providers.map((p) => p.close?.().catch(() => undefined)));
    },
  };
}
