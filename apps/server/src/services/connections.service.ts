import type { ConnectionBody, ConnectionTestAnswer } from '@sandcast/contracts';
import { type Connection, type Principal, SandcastError } from '@sandcast/core';
import { isUniqueViolation, type Store } from '@sandcast/db';
import type { z } from 'zod';
import { openConnection } from '../providers/connection-source.ts';
import type { ConnectionRequirement, ProviderRegistry } from '../providers/provider-registry.ts';
import { withTimeout } from '../with-timeout.ts';
import { recordActivity } from './activity.service.ts';
import type { SecretBox } from './secrets.ts';

type Doc = Record<string, unknown>;

const TEST_TIMEOUT_MS = 20_000;
const PLACEHOLDER = { secret: true, set: true } as const;

export interface CreateConnectionInput {
  name: string;
  provider: string;
  config: Doc;
  secrets: Doc;
}

export interface UpdateConnectionInput {
  name?: string | undefined;
  config?: Doc | undefined;
  secrets?: Doc | undefined;
}

export type ConnectionsService = ReturnType<typeof createConnectionsService>;

const isPlaceholder = (value: unknown) => value !== null && typeof value === 'object' && (value as { secret?: unknown }).secret === true;

/** The answer shape: every secret as its placeholder, never its value (not even sealed). */
export function presentConnection(connection: Connection): ConnectionBody {
  const secrets = Object.fromEntries(Object.keys(connection.secrets).map((key) => [key, { ...PLACEHOLDER }]));
  return { ...connection, secrets };
}

/** Field issues of a connection half, pointed at `config.x` or `secrets.x`; never the value. */
function parseHalf(schema: z.ZodType<Doc>, input: Doc, half: 'config' | 'secrets', provider: string): Doc {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({
    path: [half, ...issue.path.map(String)].join('.'),
    message: issue.code === 'invalid_type' && issue.input === undefined ? 'required' : issue.message,
  }));
  throw new SandcastError('validation_failed', `the ${provider} connection is invalid: ${issues[0]?.path}: ${issues[0]?.message}`, {
    issues,
  });
}

/**
 * Provider connections: the accounts connected providers run in. Secrets are parsed by the
 * provider's schema, sealed one by one and never returned, logged or recorded; the activity
 * log says what changed, not to what.
 */
export function createConnectionsService(deps: { store: Store; providers: ProviderRegistry; secrets: SecretBox }) {
  const { store } = deps;

  const requirementOf = (providerId: string): ConnectionRequirement => {
    const requirement = deps.providers.get(providerId)?.connection;
    if (!requirement) {
      const connected = deps.providers
        .list()
        .filter((r) => r.connection)
        .map((r) => r.provider.id);
      throw new SandcastError(
        'validation_failed',
        `the provider "${providerId}" takes no connection; connections are for ${connected.join(', ') || 'no provider on this server'}`,
        { issues: [{ path: 'provider', message: 'not a provider that uses connections' }] },
      );
    }
    return requirement;
  };

  const requireConnection = async (id: string): Promise<Connection> => {
    const connection = await store.repos.connections.get(id);
    if (!connection) throw new SandcastError('not_found', `no connection with id ${id}; GET /api/connections lists them`);
    return connection;
  };

  const seal = (secrets: Doc): Doc => Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, deps.secrets.encrypt(v)]));

  const duplicateName = (name: string) =>
    new SandcastError('conflict', `a connection named "${name}" already exists; choose another name or edit that one`, { name });

  return {
    list: (): Promise<Connection[]> => store.repos.connections.list(),

    get: requireConnection,

    async create(input: CreateConnectionInput, actor: Principal): Promise<Connection> {
      const requirement = requirementOf(input.provider);
      const config = parseHalf(requirement.factory.connectionSchema.config, input.config, 'config', input.provider);
      const secrets = parseHalf(requirement.factory.connectionSchema.secrets, input.secrets, 'secrets', input.provider);
      try {
        return await store.transaction(async (repos) => {
          const connection = await repos.connections.insert({ name: input.name, provider: input.provider, config, secrets: seal(secrets) });
          await recordActivity(repos, {
            action: 'connection.created',
            actor,
            subjectType: 'connection',
            subjectId: connection.id,
            details: { name: connection.name, provider: connection.provider },
          });
          return connection;
        });
      } catch (error) {
        if (isUniqueViolation(error, 'provider_connections_name_key')) throw duplicateName(input.name);
        throw error;
      }
    },

    /** Secrets sent replace those named; a placeholder, or a field left out, keeps the stored value. */
    async update(id: string, input: UpdateConnectionInput, actor: Principal): Promise<Connection> {
      const current = await requireConnection(id);
      const requirement = requirementOf(current.provider);
      const config =
        input.config === undefined
          ? undefined
          : parseHalf(requirement.factory.connectionSchema.config, input.config, 'config', current.provider);
      let secrets: Doc | undefined;
      if (input.secrets !== undefined) {
        const open = openConnection(current, deps.secrets).secrets;
        const sent = Object.fromEntries(Object.entries(input.secrets).filter(([, v]) => !isPlaceholder(v)));
        secrets = seal(parseHalf(requirement.factory.connectionSchema.secrets, { ...open, ...sent }, 'secrets', current.provider));
      }
      const changed = [input.name !== undefined && 'name', config !== undefined && 'config', secrets !== undefined && 'secrets'].filter(
        Boolean,
      );
      try {
        return await store.transaction(async (repos) => {
          const updated = await repos.connections.update(id, { name: input.name, config, secrets });
          if (!updated) throw new SandcastError('not_found', `no connection with id ${id}`);
          await recordActivity(repos, {
            action: 'connection.updated',
            actor,
            subjectType: 'connection',
            subjectId: id,
            details: { name: updated.name, changed },
          });
          return updated;
        });
      } catch (error) {
        if (isUniqueViolation(error, 'provider_connections_name_key')) throw duplicateName(input.name ?? '');
        throw error;
      }
    },

    /** Refused while an environment uses it: the answer names them. */
    async delete(id: string, actor: Principal): Promise<Connection> {
      const current = await requireConnection(id);
      const users = await store.repos.environments.namesUsingConnection(id);
      if (users.length > 0) {
        throw new SandcastError(
          'conflict',
          `connection ${current.name} is used by the environment${users.length > 1 ? 's' : ''} ${users.join(', ')}; point ${users.length > 1 ? 'them' : 'it'} at another connection or delete ${users.length > 1 ? 'them' : 'it'} first`,
          { environments: users },
        );
      }
      await store.transaction(async (repos) => {
        if (!(await repos.connections.delete(id))) throw new SandcastError('not_found', `no connection with id ${id}`);
        await recordActivity(repos, {
          action: 'connection.deleted',
          actor,
          subjectType: 'connection',
          subjectId: id,
          details: { name: current.name, provider: current.provider },
        });
      });
      return current;
    },

    /** Asks the vendor whether the connection works; the reason says what to fix. */
    async test(id: string): Promise<ConnectionTestAnswer> {
      const current = await requireConnection(id);
      const requirement = requirementOf(current.provider);
      const open = openConnection(current, deps.secrets);
      return withTimeout(requirement.factory.testConnection(open), TEST_TIMEOUT_MS, `the ${current.provider} API`).catch(
        (error: Error) => ({ ok: false as const, reason: `${error.message}; check the API URL and that the server can reach it` }),
      );
    },
  };
}
