import type { OpenPortBody, PortUrl, SandboxPort, SetupSessionPort } from '@sandcast/contracts';
import { PORT_TOKEN_PARAM } from '@sandcast/contracts';
import { type Principal, SandcastError } from '@sandcast/core';
import type { PortRecord, Repositories, Store } from '@sandcast/db';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import type { Clock } from '../clock.ts';
import type { PortConnections } from '../ports/port-connections.ts';
import { type PortHostPolicy, type PortOwner, portOrigin } from '../ports/port-hosts.ts';
import { issuePortToken, PORT_URL_TOKEN_TTL_MS, type PortGrant } from '../ports/port-tokens.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { recordActivity } from './activity.service.ts';
import { requireRegisteredProvider } from './environment-context.ts';
import type { SecretBox } from './secrets.ts';
import type { SettingsService } from './settings.service.ts';

export type PortsService = ReturnType<typeof createPortsService>;

/** What the forwarder needs to reach an open port: the provider, the instance, and the grant tokens are bound to. */
export interface OpenPortTarget {
  owner: PortOwner;
  record: PortRecord;
  grant: PortGrant;
  provider: SandboxProvider;
  instanceId: string;
  /** The agent key that created the owner, which may use its private ports too (admins always may). */
  createdByKeyId: string | null;
}

/** An owner of ports as it is now. */
interface OwnerState {
  /** Whether its sandbox is up and its ports may be opened and reached. */
  running: boolean;
  /** Its status, for refusals. */
  status: string;
  provider: string;
  instanceId: string | null;
  createdByKeyId: string | null;
}

/** What differs between owners of ports: where they are stored, how they are read, how they are named. */
interface OwnerKind {
  noun: string;
  repo(repos: Repositories): Repositories['sandboxPorts'];
  /** The owner, or null when there is none (or it is deleted). */
  load(store: Store, id: string, now: Date): Promise<OwnerState | null>;
  activity: { prefix: string; subjectType: string };
  /** Where a port of it is opened, for messages. */
  openPath(id: string): string;
  /** Its answers name it with this field. */
  present(id: string, fields: Omit<SandboxPort, 'sandboxId'>): SandboxPort | SetupSessionPort;
}

const OWNER_KINDS: Record<PortOwner['kind'], OwnerKind> = {
  sandbox: {
    noun: 'sandbox',
    repo: (repos) => repos.sandboxPorts,
    async load(store, id) {
      const sandbox = await store.repos.sandboxes.get(id);
      if (!sandbox || sandbox.status === 'deleted') return null;
      return {
        running: sandbox.status === 'running' && sandbox.desiredStatus !== 'deleted' && sandbox.providerInstanceId !== null,
        status: sandbox.status,
        provider: sandbox.provider,
        instanceId: sandbox.providerInstanceId,
        createdByKeyId: sandbox.createdByKeyId,
      };
    },
    activity: { prefix: 'sandbox', subjectType: 'sandbox' },
    openPath: (id) => `POST /api/sandboxes/${id}/ports`,
    present: (sandboxId, fields) => ({ sandboxId, ...fields }),
  },
  setup: {
    noun: 'setup session',
    repo: (repos) => repos.setupSessionPorts,
    async load(store, id, now) {
      const session = await store.repos.setupSessions.get(id);
      if (!session) return null;
      // Past its expiry it is over, even before the sweep records it.
      const expired = new Date(session.expiresAt) <= now;
      return {
        running: session.status === 'waiting_for_user' && session.providerLeaseId !== null && !expired,
        status: expired && session.status === 'waiting_for_user' ? 'expired' : session.status,
        provider: session.provider,
        instanceId: session.providerLeaseId,
        // Setup sessions are for admins only.
        createdByKeyId: null,
      };
    },
    activity: { prefix: 'environment.custom_image_setup', subjectType: 'setup_session' },
    openPath: (id) => `POST /api/environment-custom-image-setup-sessions/${id}/ports`,
    present: (sessionId, fields) => ({ sessionId, ...fields }),
  },
};

/**
 * The ports of sandboxes and of setup sessions served as URLs (docs/decisions/0015-sandbox-ports.md,
 * 0017-setup-session-ports.md). The record says which ports are open; the forwarder checks it and
 * the owner's status on every request and connection, so closing a port, deleting the sandbox or
 * ending the setup session ends access at once.
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

  const requireOwner = async (owner: PortOwner): Promise<OwnerState> => {
    const state = await OWNER_KINDS[owner.kind].load(store, owner.id, now());
    if (!state) throw new SandcastError('not_found', `no ${OWNER_KINDS[owner.kind].noun} with id ${owner.id}`);
    return state;
  };

  const present = (owner: PortOwner, record: PortRecord) =>
    OWNER_KINDS[owner.kind].present(owner.id, {
      port: record.port,
      visibility: record.visibility,
      baseUrl: `${portOrigin(deps.hosts, owner, record.port)}/`,
      createdAt: record.createdAt,
    });

  const requireOpen = async (owner: PortOwner, port: number): Promise<PortRecord> => {
    await requireOwner(owner);
    const kind = OWNER_KINDS[owner.kind];
    const record = await kind.repo(store.repos).get(owner.id, port);
    if (!record) {
      throw new SandcastError('not_found', `port ${port} of ${kind.noun} ${owner.id} is not open; open it with ${kind.openPath(owner.id)}`);
    }
    return record;
  };

  const grantOf = (owner: PortOwner, record: PortRecord): PortGrant => ({ owner, port: record.port, openedAt: record.createdAt });

  const recordPortActivity = (repos: Repositories, owner: PortOwner, verb: 'opened' | 'closed', actor: Principal, details: object) => {
    const { activity } = OWNER_KINDS[owner.kind];
    return recordActivity(repos, {
      action: `${activity.prefix}.port.${verb}`,
      actor,
      subjectType: activity.subjectType,
      subjectId: owner.id,
      details: { ...details },
    });
  };

  return {
    async open(owner: PortOwner, body: Required<OpenPortBody>, actor: Principal) {
      const state = await requireOwner(owner);
      const kind = OWNER_KINDS[owner.kind];
      if (!state.running) {
        throw new SandcastError('conflict', `${kind.noun} ${owner.id} is ${state.status}; ports open only while it is running`, {
          status: state.status,
        });
      }
      const { provider } = requireRegisteredProvider(deps.providers, state.provider);
      if (!provider.capabilities.portForward || !provider.openPortStream) {
        throw new SandcastError(
          'capability_unsupported',
          `the ${provider.displayName} provider cannot serve a ${kind.noun}'s ports as URLs`,
        );
      }
      if (body.visibility === 'public' && !(await deps.settings.get()).security.allowPublicPorts) {
        throw new SandcastError(
          'forbidden',
          'public ports are turned off on this instance; open the port as "private", or turn on Settings → Security → Allow public ports ' +
            '(`sandcast settings set security.allowPublicPorts true`)',
        );
      }
      const before = await kind.repo(store.repos).get(owner.id, body.port);
      const record = await store.transaction(async (repos) => {
        const saved = await kind.repo(repos).upsert({ ownerId: owner.id, port: body.port, visibility: body.visibility });
        await recordPortActivity(repos, owner, 'opened', actor, { port: body.port, visibility: body.visibility });
        return saved;
      });
      // Made private: whoever was connected without a credential is cut off.
      if (before?.visibility === 'public' && record.visibility === 'private') deps.connections.closeAll(owner.id, body.port);
      return present(owner, record);
    },

    async list(owner: PortOwner) {
      await requireOwner(owner);
      return (await OWNER_KINDS[owner.kind].repo(store.repos).list(owner.id)).map((record) => present(owner, record));
    },

    /** The URL to hand out; a private port's carries a signed token that ends at `expiresAt`. */
    async url(owner: PortOwner, port: number): Promise<PortUrl> {
      const record = await requireOpen(owner, port);
      const base = `${portOrigin(deps.hosts, owner, port)}/`;
      if (record.visibility === 'public') return { url: base };
      const expiresAtMs = now().getTime() + PORT_URL_TOKEN_TTL_MS;
      const token = issuePortToken(deps.secrets, grantOf(owner, record), expiresAtMs);
      return { url: `${base}?${PORT_TOKEN_PARAM}=${token}`, expiresAt: new Date(expiresAtMs).toISOString() };
    },

    async close(owner: PortOwner, port: number, actor: Principal) {
      await requireOwner(owner);
      const kind = OWNER_KINDS[owner.kind];
      const record = await store.transaction(async (repos) => {
        const removed = await kind.repo(repos).delete(owner.id, port);
        if (!removed) throw new SandcastError('not_found', `port ${port} of ${kind.noun} ${owner.id} is not open`);
        await recordPortActivity(repos, owner, 'closed', actor, { port });
        return removed;
      });
      deps.connections.closeAll(owner.id, port);
      return present(owner, record);
    },

    /** Closes every port of an owner whose sandbox is going (a setup session ending): URLs and connections end now. */
    async closeAllOf(owner: PortOwner): Promise<void> {
      try {
        await OWNER_KINDS[owner.kind].repo(store.repos).deleteAll(owner.id);
      } finally {
        // Cut even when the rows could not be deleted: the owner is not running, so nothing reconnects.
        deps.connections.closeAll(owner.id);
      }
    },

    /** For the forwarder, on every request and connection: the open port, or null when it is not reachable now. */
    async target(owner: PortOwner, port: number): Promise<OpenPortTarget | null> {
      const kind = OWNER_KINDS[owner.kind];
      const state = await kind.load(store, owner.id, now());
      if (!state?.running || !state.instanceId) return null;
      const record = await kind.repo(store.repos).get(owner.id, port);
      if (!record) return null;
      const provider = deps.providers.get(state.provider)?.provider;
      if (!provider?.openPortStream || !provider.capabilities.portForward) return null;
      return {
        owner,
        record,
        grant: grantOf(owner, record),
        provider,
        instanceId: state.instanceId,
        createdByKeyId: state.createdByKeyId,
      };
    },
  };
}
