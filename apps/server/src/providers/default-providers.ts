import { createDaytonaFactory } from '@sandcast/provider-daytona';
import { createDockerProvider } from '@sandcast/provider-docker';
import { createFakeProvider } from '@sandcast/provider-fake';
import { createKubernetesFactory } from '@sandcast/provider-kubernetes';
import { createLocalProvider } from '@sandcast/provider-local';
import type { ConnectedProviderFactory, SandboxProvider } from '@sandcast/provider-sdk';
import type { ServerConfig } from '../config.ts';

/** The providers a server built from this configuration offers. The only place concrete providers are named. */
export function defaultProviders(config: Pick<ServerConfig, 'dataDir' | 'enableFakeProvider'>): SandboxProvider[] {
  // Both are always offered; one that cannot run here lists itself as unavailable, with the reason.
  const providers: SandboxProvider[] = [
    createLocalProvider({ dataDir: config.dataDir }),
    createDockerProvider({ dataDir: config.dataDir }),
  ];
  // Tests only: users never see the fake by accident.
  if (config.enableFakeProvider) providers.push(createFakeProvider({ dataDir: config.dataDir }));
  return providers;
}

/** Providers that run in accounts reached through connections; unavailable until one exists. */
export function defaultConnectedProviders(): ConnectedProviderFactory[] {
  return [createDaytonaFactory(), createKubernetesFactory()];
}
