import { createDockerProvider } from '@sandcast/provider-docker';
import { createFakeProvider } from '@sandcast/provider-fake';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import type { ServerConfig } from '../config.ts';

/** The providers a server built from this configuration offers. The only place concrete providers are named. */
export function defaultProviders(config: Pick<ServerConfig, 'dataDir' | 'enableFakeProvider'>): SandboxProvider[] {
  // Docker is always offered; without an engine it lists itself as unavailable, with the reason.
  const providers: SandboxProvider[] = [createDockerProvider({ dataDir: config.dataDir })];
  // Tests only: users never see the fake by accident.
  if (config.enableFakeProvider) providers.push(createFakeProvider({ dataDir: config.dataDir }));
  return providers;
}
