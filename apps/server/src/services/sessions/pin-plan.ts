import {
  bootstrapSecretIssues,
  type EnvironmentPolicy,
  type InstanceSettings,
  inlineSpecIssues,
  type PolicyResolution,
  SandcastError,
} from '@sandcast/core';
import type { Repositories } from '@sandcast/db';
import type { ProviderRegistry } from '../../providers/provider-registry.ts';
import { openConfig } from '../config-secrets.ts';
import { requireRegisteredProvider } from '../environment-context.ts';
import { mergeSpec, refuseSpecIssues, specIssues } from '../sandbox-spec-rules.ts';
import type { SecretBox } from '../secrets.ts';
import { matchingImage, requireBootableConfig, type SandboxPlan } from './primary-sandbox.ts';

type Doc = Record<string, unknown>;

/** Field paths of a zod failure, under the one-off spec's config. */
const inlineConfigIssues = (issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>) =>
  issues.map((issue) => ({ path: ['sandbox.inline.config', ...issue.path.map(String)].join('.'), message: issue.message }));

/**
 * What a session's primary sandbox is made from, from a resolved policy: the binding's exact
 * environment revision (never the environment's head), its durability override, a one-off spec's
 * config fields (re-parsed by the provider's schema) and lifecycle/bootstrap, and the
 * environment's active image if it was built from exactly that. Throws `unprocessable` for what
 * the instance or the provider refuses.
 */
export async function planPrimarySandbox(
  deps: {
    repos: Repositories;
    providers: ProviderRegistry;
    secrets: SecretBox;
    settings: InstanceSettings;
    policy: EnvironmentPolicy;
  },
  resolution: Exclude<PolicyResolution, { kind: 'none' }>,
  sessionId: string,
): Promise<SandboxPlan> {
  const { binding } = resolution;
  const revision = await deps.repos.environments.getRevision(binding.environmentRevisionId);
  if (!revision) {
    throw new SandcastError(
      'unprocessable',
      `binding "${resolution.name}" names environment revision ${binding.environmentRevisionId}, which no longer exists; edit the agent's sandbox policy`,
      { reason: 'revision_missing', binding: resolution.name },
    );
  }
  const registered = requireRegisteredProvider(deps.providers, revision.provider);
  let config: Doc = openConfig(revision.config, deps.secrets);
  let spec = mergeSpec(revision.spec, { durability: binding.durability });
  let configOverrides: Doc = {};
  if (resolution.kind === 'inline') {
    const { inline } = resolution;
    const issues = inlineSpecIssues(inline, revision.provider, {
      providers: deps.settings.sessions.inlineProviders,
      configFields: deps.settings.sessions.inlineConfigFields,
    });
    for (const field of Object.keys(inline.config ?? {})) {
      if (registered.secretPaths.some((p) => p === field || p.startsWith(`${field}.`))) {
        issues.push({ path: `sandbox.inline.config.${field}`, message: 'a secret field cannot be set by a one-off spec' });
      }
    }
    issues.push(
      ...bootstrapSecretIssues(inline.bootstrap ?? []).map((i) => ({ ...i, path: i.path.replace(/^spec\./, 'sandbox.inline.') })),
    );
    const first = issues[0];
    if (first) throw new SandcastError('unprocessable', `the one-off spec is refused: ${first.path}: ${first.message}`, { issues });
    configOverrides = { ...(inline.config ?? {}) };
    const parsed = registered.provider.configSchema.safeParse({ ...config, ...configOverrides });
    if (!parsed.success) {
      const parseIssues = inlineConfigIssues(parsed.error.issues);
      throw new SandcastError(
        'unprocessable',
        `the one-off spec's config is invalid: ${parseIssues[0]?.path}: ${parseIssues[0]?.message}`,
        {
          issues: parseIssues,
        },
      );
    }
    config = parsed.data;
    spec = mergeSpec(spec, { lifecycle: inline.lifecycle, bootstrap: inline.bootstrap });
  }
  // The binding's durability override must be one the provider honours too.
  refuseSpecIssues(specIssues(spec, registered.provider), `binding "${resolution.name}" cannot start`);
  const plan: SandboxPlan = {
    environmentId: revision.environmentId,
    revision: { id: revision.id, number: revision.number },
    registered,
    config,
    spec,
    configOverrides,
    image: await matchingImage(deps.repos, revision.environmentId, registered, config),
    sessionId,
    bindingName: resolution.kind === 'inline' ? 'inline' : resolution.name,
  };
  requireBootableConfig(plan, deps.policy);
  return plan;
}
