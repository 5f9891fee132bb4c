import { type BootSource, type Environment, type EnvironmentPolicy, environmentConfigIssues, SandcastError } from '@sandcast/core';
import type { ProviderRegistry, RegisteredProvider } from '../providers/provider-registry.ts';
import { bootSourceFor, fingerprintOf } from './boot-source.ts';
import type { EnvironmentsService } from './environments.service.ts';

/** An environment as the runtime needs it: open config, its provider, and its boot source. */
export interface EnvironmentContext {
  environment: Environment;
  registered: RegisteredProvider;
  bootSource: BootSource;
  fingerprint: string;
  /**
   * Why the instance's policy no longer lets this config boot (an older revision made before the
   * policy, or before the setting was turned off), or null. Checked by requireBootable.
   */
  bootRefusal: string | null;
}

/** Refuses to boot a sandbox from a config the instance's policy does not allow (now). */
export function requireBootable(ctx: EnvironmentContext): void {
  if (ctx.bootRefusal === null) return;
  throw new SandcastError(
    'forbidden',
    `environment ${ctx.environment.name} (revision ${ctx.environment.currentRevision.number}) cannot boot here: ${ctx.bootRefusal}; edit the environment to fix it`,
  );
}

export function requireRegisteredProvider(providers: ProviderRegistry, id: string): RegisteredProvider {
  const registered = providers.get(id);
  if (!registered) {
    throw new SandcastError(
      'provider_unavailable',
      `the ${id} provider is not registered on this server; start it with that provider enabled or move the environment to another provider`,
    );
  }
  return registered;
}

export type EnvironmentContextLoader = (environmentId: string) => Promise<EnvironmentContext>;

/** Loads an environment with decrypted config (never to be returned over HTTP). */
export function createEnvironmentContextLoader(deps: {
  environments: EnvironmentsService;
  providers: ProviderRegistry;
  policy: () => Promise<EnvironmentPolicy>;
}): EnvironmentContextLoader {
  return async (environmentId) => {
    // Two independent reads: one round trip's wait, not two.
    const [environment, policy] = await Promise.all([deps.environments.getOpen(environmentId), deps.policy()]);
    const registered = requireRegisteredProvider(deps.providers, environment.provider);
    const bootSource = bootSourceFor(registered, environment.provider, environment.config);
    const issues = environmentConfigIssues(environment.config, policy);
    const bootRefusal = issues.length > 0 ? issues.map((i) => `${i.path}: ${i.message}`).join('; ') : null;
    return { environment, registered, bootSource, fingerprint: fingerprintOf(bootSource), bootRefusal };
  };
}
