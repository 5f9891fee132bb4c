import type { OpenPortBody, PortUrl, SandboxPort } from '@sandcast/contracts';
import { PORT_TOKEN_PARAM } from '@sandcast/contracts';
import { type Principal, type Sandbox, SandcastError } from '@sandcast/core';
import type { SandboxPortRecord, Store } from '@sandcast/db';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import type { Clock } from '../clock.ts';
import type { PortConnections } from '../ports/port-connections.ts';
import { type PortHostPolicy, portOrigin } from '../ports/port-hosts.ts';
import { issuePortToken, PORT_URL_TOKEN_TTL_MS, type PortGrant } from '../ports/port-tokens.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { recordActivity } from './activity.service.ts';
import { requireRegisteredProvider } from './environment-context.ts';
import type { SecretBox } from './secrets.ts';
import type { SettingsService } from './settings.service.ts';

export type PortsService = ReturnType<typeof createPortsService>;

/** What the forwarder needs to reach an open port: the provider, the instance, and the grant tokens are bound to. */
export interface OpenPortTarget {
  sandbox: Sandbox;
  record: SandboxPortRecord;
  grant: PortGrant;
  provider: SandboxProvider;
  instanceId: string;
}

/**
 * A sandbox's ports served as URLs (docs/decisions/0015-sandbox-ports.md). The record says which
 * ports are open; the forwarder checks it on every request and connection, so closing a port or
 * deleting the sandbox ends access at once.
 */
export function createPortsService(deps: {
  store: Store;
  providers: ProviderRegistry;
  settings: SettingsService;
  secrets: SecretBox;
  hosts: PortHostPolicy;
  connections: PortConnections;
  clock?: Clock | undefined;
}) {
  const { store } = deps;
  const now = () => deps.clock?.now() ?? new Date();

  const requireSandbox = async (id: string): Promise<Sandbox> => {
    const sandbox = await store.repos.sandboxes.get(id);
    if (!sandbox || sandbox.status === 'deleted') throw new SandcastError('not_found', `no sandbox with id ${id}`);
    return sandbox;
  };

  const present = (record: SandboxPortRecord): SandboxPort => ({
    sandboxId: record.sandboxId,
    port: record.port,
    visibility: record.visibility,
    baseUrl: `${portOrigin(deps.hosts, record.sandboxId, record.port)}/`,
    createdAt: record.createdAt,
  });

  const requireOpen = async (sandboxId: string, port: number): Promise<SandboxPortRecord> => {
    await requireSandbox(sandboxId);
    const record = await store.repos.sandboxPorts.get(sandboxId, port);
    if (!record) {
      throw new SandcastError(
        'not_found',
        `port ${port} of sandbox ${sandboxId} is not open; open it with POST /api/sandboxes/${sandboxId}/ports`,
      );
    }
    return record;
  };

  const grantOf = (record: SandboxPortRecord): PortGrant => ({
    sandboxId: record.sandboxId,
    port: record.port,
    openedAt: record.createdAt,
  });

  return {
    async open(sandboxId: string, body: Required<OpenPortBody>, actor: Principal): Promise<SandboxPort> {
      const sandbox = await requireSandbox(sandboxId);
      if (sandbox.status !== 'running') {
        throw new SandcastError('conflict', `sandbox ${sandboxId} is ${sandbox.status}; ports open only on a running sandbox`, {
          status: sandbox.status,
        });
      }
      const { provider } = requireRegisteredProvider(deps.providers, sandbox.provider);
      if (!provider.capabilities.portForward || !provider.openPortStream) {
        throw new SandcastError('capability_unsupported', `the ${provider.displayName} provider cannot serve a sandbox's ports as URLs`);
      }
      if (body.visibility === 'public' && !(await deps.settings.get()).security.allowPublicPorts) {
        throw new SandcastError(
          'forbidden',
          'public ports are turned off on this instance; open the port as "private", or turn on Settings → Security → Allow public ports ' +
            '(`sandcast settings set security.allowPublicPorts true`)',
        );
      }
      const before = await store.repos.sandboxPorts.get(sandboxId, body.port);
      const record = await store.transaction(async (repos) => {
        const saved = await repos.sandboxPorts.upsert({ sandboxId, port: body.port, visibility: body.visibility });
        await recordActivity(repos, {
          action: 'sandbox.port.opened',
          actor,
          subjectType: 'sandbox',
          subjectId: sandboxId,
          details: { port: body.port, visibility: body.visibility },
        });
        return saved;
      });
      // Made private: whoever was connected without a credential is cut off.
      if (before?.visibility === 'public' && record.visibility === 'private') deps.connections.closeAll(sandboxId, body.port);
      return present(record);
    },

    async list(sandboxId: string): Promise<SandboxPort[]> {
      await requireSandbox(sandboxId);
      return (await store.repos.sandboxPorts.list(sandboxId)).map(present);
    },

    /** The URL to hand out; a private port's carries a signed token that ends at `expiresAt`. */
    async url(sandboxId: string, port: number): Promise<PortUrl> {
      const record = await requireOpen(sandboxId, port);
      const base = `${portOrigin(deps.hosts, sandboxId, port)}/`;
      if (record.visibility === 'public') return { url: base };
      const expiresAtMs = now().getTime() + PORT_URL_TOKEN_TTL_MS;
      const token = issuePortToken(deps.secrets, grantOf(record), expiresAtMs);
      return { url: `${base}?${PORT_TOKEN_PARAM}=${token}`, expiresAt: new Date(expiresAtMs).toISOString() };
    },

    async close(sandboxId: string, port: number, actor: Principal): Promise<SandboxPort> {
      await requireSandbox(sandboxId);
      const record = await store.transaction(async (repos) => {
        const removed = await repos.sandboxPorts.delete(sandboxId, port);
        if (!removed) throw new SandcastError('not_found', `port ${port} of sandbox ${sandboxId} is not open`);
        await recordActivity(repos, {
          action: 'sandbox.port.closed',
          actor,
          subjectType: 'sandbox',
          subjectId: sandboxId,
          details: { port },
        });
        return removed;
      });
      deps.connections.closeAll(sandboxId, port);
      return present(record);
    },

    /** For the forwarder, on every request and connection: the open port, or null when it is not reachable now. */
    async target(sandboxId: string, port: number): Promise<OpenPortTarget | null> {
      const sandbox = await store.repos.sandboxes.get(sandboxId);
      if (sandbox?.status !== 'running' || sandbox.desiredStatus === 'deleted' || !sandbox.providerInstanceId) return null;
      const record = await store.repos.sandboxPorts.get(sandboxId, port);
      if (!record) return null;
      const registered = deps.providers.get(sandbox.provider);
      const provider = registered?.provider;
      if (!provider?.openPortStream || !provider.capabilities.portForward) return null;
      return { sandbox, record, grant: grantOf(record), provider, instanceId: sandbox.providerInstanceId };
    },
  };
}
