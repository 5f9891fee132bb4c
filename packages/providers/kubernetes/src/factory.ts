import type { ConnectedProviderFactory, ConnectionTest, ProviderConfig } from '@sandcast/provider-sdk';
import type { z } from 'zod';
import {
  KUBERNETES_RUNTIME_KNOBS,
  kubernetesConfigSchema,
  kubernetesConnectionConfigSchema,
  kubernetesConnectionSecretsSchema,
  PROVIDER_ID,
} from './config.ts';
import { providerOptionsOf } from './connection.ts';
import { createKubernetesProvider, kubernetesCapabilities } from './kubernetes-provider.ts';

/**
 * Kubernetes as a connected provider: one provider per cluster (and namespace) the operator
 * connects. The factory declares capture, which a connection offers once it names a registry; one
 * without refuses setup and capture, saying what to set.
 */
export function createKubernetesFactory(): ConnectedProviderFactory {
  return {
    id: PROVIDER_ID,
    displayName: 'Kubernetes',
    configSchema: kubernetesConfigSchema as unknown as z.ZodType<ProviderConfig>,
    capabilities: kubernetesCapabilities(true),
    runtimeKnobs: KUBERNETES_RUNTIME_KNOBS,
    connectionSchema: {
      config: kubernetesConnectionConfigSchema as unknown as z.ZodType<ProviderConfig>,
      secrets: kubernetesConnectionSecretsSchema as unknown as z.ZodType<ProviderConfig>,
    },
    connect: (connection) => createKubernetesProvider(providerOptionsOf(connection)),
    async testConnection(connection): Promise<ConnectionTest> {
      try {
        const availability = await createKubernetesProvider(providerOptionsOf(connection)).availability();
        return availability.available ? { ok: true } : { ok: false, reason: availability.reason };
      } catch (error) {
        return { ok: false, reason: (error as Error).message };
      }
    },
  };
}
