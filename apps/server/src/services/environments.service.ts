import {
  canonicalJson,
  type Environment,
  type EnvironmentPolicy,
  type EnvironmentRevision,
  environmentConfigIssues,
  type Principal,
  type SandboxSpec,
  SandcastError,
} from '@sandcast/core';
import { isUniqueViolation, type Store } from '@sandcast/db';
import type { z } from 'zod';
import type { ProviderRegistry, RegisteredProvider } from '../providers/provider-registry.ts';
import { recordActivity } from './activity.service.ts';
import { bootSourceFor, fingerprintOf } from './boot-source.ts';
import { maskConfig, openConfig, resolveSecretPlaceholders, sealConfig } from './config-secrets.ts';
import { type Reconciliation, reconcileImageLink } from './custom-images/image-link.ts';
import { mergeSpec, refuseSpecIssues, type SpecInput, specFromInput, specIssues } from './sandbox-spec-rules.ts';
import type { SecretBox } from './secrets.ts';

type Doc = Record<string, unknown>;

export interface CreateEnvironmentInput {
  name: string;
  provider: string;
  config: Doc;
  connectionId?: string | null | undefined;
  /** What is missing takes its default. */
  spec?: SpecInput | undefined;
}

export interface UpdateEnvironmentInput {
  name?: string | undefined;
  provider?: string | undefined;
  config?: Doc | undefined;
  connectionId?: string | null | undefined;
  /** Merged over the current spec field by field. */
  spec?: SpecInput | undefined;
}

export type EnvironmentsService = ReturnType<typeof createEnvironmentsService>;

/** Field paths of a zod failure, prefixed with `config.` so clients can point at the field. */
function configIssues(error: z.ZodError): Array<{ path: string; message: string }> {
  return error.issues.map((issue) => ({ path: ['config', ...issue.path.map(String)].join('.'), message: issue.message }));
}

/** zod's fallback messages for a missing or mistyped field, in words. */
function requiredInWords(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'invalid_type') return undefined;
  if (issue.input === undefined) return `required (${issue.expected})`;
  return `must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}, not ${issue.input === null ? 'null' : Array.isArray(issue.input) ? 'an array' : typeof issue.input}`;
}

/** An edit's outcome: the environment, whether it made a revision, and what that did to the active image. */
export interface EnvironmentUpdate {
  environment: Environment;
  newRevision: boolean;
  customImageReconciliation: Reconciliation;
}

/**
 * Environments: named provider configurations with immutable revisions. Configs are parsed by
 * the provider's schema before anything is stored; secret fields are encrypted at rest (the
 * records this returns hold them sealed; the HTTP layer masks them).
 */
export function createEnvironmentsService({
  store,
  providers,
  secrets,
  policy,
  bootSourceChanged,
}: {
  store: Store;
  providers: ProviderRegistry;
  secrets: SecretBox;
  /** What the instance lets a config ask for (host network, sandbox paths). */
  policy: () => Promise<EnvironmentPolicy>;
  /** Told after a change to what an environment boots from commits (boot-target caches drop it). */
  bootSourceChanged?: ((environmentId: string) => void) | undefined;
}) {
  const requireProvider = (id: string): RegisteredProvider => {
    const registered = providers.get(id);
    if (!registered) {
      const known = providers
        .list()
        .map((p) => p.provider.id)
        .join(', ');
      throw new SandcastError(
        'validation_failed',
        `unknown provider "${id}"; GET /api/sandbox-targets lists the registered ones (${known || 'none'})`,
        {
          issues: [{ path: 'provider', message: `unknown provider "${id}"` }],
        },
      );
    }
    return registered;
  };

  /** Parses a config for a provider and returns it sealed for storage and open for comparison. */
  const prepareConfig = async (registered: RegisteredProvider, incoming: Doc, currentOpen: Doc | null) => {
    const resolved = resolveSecretPlaceholders(incoming, registered.secretPaths, currentOpen);
    // A provider's own field messages win; a field without one still reads "required", not zod's "expected string, received undefined".
    const parsed = registered.provider.configSchema.safeParse(resolved, { error: requiredInWords });
    if (!parsed.success) {
      const issues = configIssues(parsed.error);
      throw new SandcastError(
        'validation_failed',
        `the ${registered.provider.id} config is invalid: ${issues[0]?.path.replace(/^config\.?/, '') || '(config)'}: ${issues[0]?.message}`,
        { issues },
      );
    }
    const refused = environmentConfigIssues(parsed.data, await policy());
    if (refused.length > 0) {
      throw new SandcastError(
        'validation_failed',
        `the ${registered.provider.id} config is refused: ${refused[0]?.path}: ${refused[0]?.message}`,
        {
          issues: refused,
        },
      );
    }
    return { open: parsed.data, sealed: sealConfig(parsed.data, registered.secretPaths, secrets) };
  };

  /** The connection an environment of this provider uses: required by a connected provider, refused by the others. */
  const checkConnection = async (registered: RegisteredProvider, connectionId: string | null): Promise<string | null> => {
    const provider = registered.provider.id;
    const refuse = (message: string) =>
      new SandcastError('unprocessable', message, {
        reason: 'connection',
        field: 'connectionId',
        issues: [{ path: 'connectionId', message }],
      });
    if (!registered.connection) {
      if (connectionId) throw refuse(`the ${provider} provider takes no connection; leave connectionId out`);
      return null;
    }
    if (!connectionId) {
      throw refuse(
        `the ${provider} provider runs in an account reached through a connection: send connectionId (POST /api/connections creates one)`,
      );
    }
    const connection = await store.repos.connections.get(connectionId);
    if (!connection || connection.provider !== provider) {
      throw refuse(`connectionId: no ${provider} connection with id ${connectionId}; GET /api/connections lists them`);
    }
    return connectionId;
  };

  const requireEnvironment = async (id: string): Promise<Environment> => {
    const env = await store.repos.environments.get(id);
    if (!env) throw new SandcastError('not_found', `no environment with id ${id}; GET /api/environments lists them`);
    return env;
  };

  /**
   * The durability must be one the provider declares; credentials stay out of bootstrap; egress
   * needs the provider's proxy and a sandbox with no network of its own (`config.network` none).
   */
  const checkSpec = (spec: SandboxSpec, registered: RegisteredProvider, config: Doc) =>
    refuseSpecIssues(specIssues(spec, registered.provider, config), `the environment's spec is refused`);

  const duplicateName = (name: string) =>
    new SandcastError('conflict', `an environment named "${name}" already exists; choose another name or edit that one`, { name });

  return {
    list: (): Promise<Environment[]> => store.repos.environments.list(),

    get: (id: string): Promise<Environment> => requireEnvironment(id),

    /** The stored environment with secrets decrypted, for handing to a provider. Never return it over HTTP. */
    async getOpen(id: string): Promise<Environment> {
      const env = await requireEnvironment(id);
      return { ...env, config: openConfig(env.config, secrets) };
    },

    async create(input: CreateEnvironmentInput, actor: Principal): Promise<Environment> {
      const registered = requireProvider(input.provider);
      const config = await prepareConfig(registered, input.config, null);
      const connectionId = await checkConnection(registered, input.connectionId ?? null);
      const spec = specFromInput(input.spec);
      checkSpec(spec, registered, config.open);
      try {
        const created = await store.transaction(async (repos) => {
          const env = await repos.environments.insert({
            name: input.name,
            provider: input.provider,
            config: config.sealed,
            connectionId,
            spec,
          });
          await recordActivity(repos, {
            action: 'environment.created',
            actor,
            subjectType: 'environment',
            subjectId: env.id,
            details: { name: env.name, provider: env.provider, revision: 1, config: maskConfig(env.config), spec: env.spec },
            secretPaths: registered.secretPaths.map((p) => `config.${p}`),
          });
          return env;
        });
        return created;
      } catch (error) {
        if (isUniqueViolation(error, 'environments_name_key')) throw duplicateName(input.name);
        throw error;
      }
    },

    /**
     * One transaction: the edit, its activity, and — when it made a revision — relinking or
     * detaching the active custom image for the new boot source.
     */
    async update(id: string, input: UpdateEnvironmentInput, actor: Principal): Promise<EnvironmentUpdate> {
      const current = await requireEnvironment(id);
      const currentOpen = openConfig(current.config, secrets);
      const providerId = input.provider ?? current.provider;
      const registered = requireProvider(providerId);
      const providerChanged = providerId !== current.provider;
      let configChange: { open: Doc; sealed: Doc } | undefined;
      if (input.config !== undefined || providerChanged) {
        // Secrets of one provider never carry over to another.
        const prepared = await prepareConfig(registered, input.config ?? currentOpen, providerChanged ? null : currentOpen);
        if (providerChanged || canonicalJson(prepared.open) !== canonicalJson(currentOpen)) configChange = prepared;
      }
      const nameChange = input.name !== undefined && input.name !== current.name ? input.name : undefined;
      // A provider that takes no connection drops the old one; a connected one keeps it unless another is named.
      const wantedConnection =
        input.connectionId !== undefined ? input.connectionId : registered.connection ? (current.connectionId ?? null) : null;
      const connectionId = await checkConnection(registered, wantedConnection);
      const connectionChange = connectionId !== (current.connectionId ?? null) ? connectionId : undefined;
      const mergedSpec = mergeSpec(current.spec, input.spec);
      // Checked again on a provider change too: the new provider may not honour the durability.
      if (input.spec !== undefined || input.config !== undefined || providerChanged)
        checkSpec(mergedSpec, registered, configChange?.open ?? currentOpen);
      const specChange = canonicalJson(mergedSpec) !== canonicalJson(current.spec) ? mergedSpec : undefined;
      const unchanged: Reconciliation = { action: 'none' };
      if (configChange === undefined && nameChange === undefined && connectionChange === undefined && specChange === undefined) {
        return { environment: current, newRevision: false, customImageReconciliation: unchanged };
      }
      try {
        const result = await store.transaction(async (repos) => {
          const updated = await repos.environments.update(id, {
            name: nameChange,
            provider: configChange ? providerId : undefined,
            config: configChange?.sealed,
            connectionId: connectionChange,
            spec: specChange,
            expectedRevisionId: current.currentRevision.id,
          });
          if (!updated) {
            throw new SandcastError(
              'conflict',
              'the environment changed while this edit was being made; reload it and apply the edit again',
            );
          }
          const changed = [
            nameChange !== undefined && 'name',
            providerChanged && 'provider',
            configChange !== undefined && 'config',
            connectionChange !== undefined && 'connectionId',
            specChange !== undefined && 'spec',
          ].filter(Boolean);
          await recordActivity(repos, {
            action: 'environment.updated',
            actor,
            subjectType: 'environment',
            subjectId: id,
            details: {
              changed,
              revision: updated.environment.currentRevision.number,
              config: maskConfig(updated.environment.config),
              spec: updated.environment.spec,
            },
            secretPaths: registered.secretPaths.map((p) => `config.${p}`),
          });
          // A new revision may change what the active custom image was built from; a spec-only
          // one never does, so the image stays linked (to the new revision).
          let customImageReconciliation = unchanged;
          if (updated.newRevision) {
            const bootSource = bootSourceFor(registered, providerId, configChange?.open ?? currentOpen);
            customImageReconciliation = await reconcileImageLink(repos, {
              environmentId: id,
              revision: updated.environment.currentRevision,
              bootSource,
              fingerprint: fingerprintOf(bootSource),
              actor,
            });
          }
          return { ...updated, customImageReconciliation };
        });
        bootSourceChanged?.(id);
        return result;
      } catch (error) {
        if (isUniqueViolation(error, 'environments_name_key')) throw duplicateName(input.name ?? '');
        if (isUniqueViolation(error, 'environment_revisions_number_key')) {
          throw new SandcastError('conflict', 'the environment changed while this edit was being made; reload it and apply the edit again');
        }
        throw error;
      }
    },

    async delete(id: string, actor: Principal): Promise<Environment> {
      const current = await requireEnvironment(id);
      await store.transaction(async (repos) => {
        if (!(await repos.environments.delete(id))) throw new SandcastError('not_found', `no environment with id ${id}`);
        await recordActivity(repos, {
          action: 'environment.deleted',
          actor,
          subjectType: 'environment',
          subjectId: id,
          details: { name: current.name },
        });
      });
      bootSourceChanged?.(id);
      return current;
    },

    async revisions(id: string): Promise<EnvironmentRevision[]> {
      await requireEnvironment(id);
      return store.repos.environments.revisions(id);
    },
  };
}
