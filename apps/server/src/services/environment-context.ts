import { type BootSource, type Environment, SandcastError } from '@sandcast/core';
import type { ProviderRegistry, RegisteredProvider } from '../providers/provider-registry.ts';
import { bootSourceFor, fingerprintOf } from './boot-source.ts';
import type { EnvironmentsService } from './environments.service.ts';

/** An environment as the runtime needs it: open config, its provider, and its boot source. */
export interface EnvironmentContext {
  environment: Environment;
  registered: RegisteredProvider;
  bootSource: BootSource;
  fingerprint: string;
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
}): EnvironmentContextLoader {
  return async (environmentId) => {
    const environment = await deps.environments.getOpen(environmentId);
    const registered = requireRegisteredProvider(deps.providers, environment.provider);
    const bootSource = bootSourceFor(registered, environment.provider, environment.config);
    return { environment, registered, bootSource, fingerprint: fingerprintOf(bootSource) };
  };
}
