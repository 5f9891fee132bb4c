import type { ConnectedProviderFactory, ProviderConnection } from '@sandcast/provider-sdk';
import { PROVIDER_ID } from './client.ts';
import { DAYTONA_RUNTIME_KNOBS, daytonaConfigSchema, daytonaConnectionConfigSchema, daytonaConnectionSecretsSchema } from './config.ts';
import { createDaytonaProvider, DAYTONA_CAPABILITIES } from './daytona-provider.ts';

const settingsOf = (connection: ProviderConnection) => {
  const config = daytonaConnectionConfigSchema.parse(connection.config);
  const secrets = daytonaConnectionSecretsSchema.parse(connection.secrets);
  return { apiUrl: config.apiUrl, target: config.target, apiKey: secrets.apiKey };
};

/** Daytona as a connected provider: one provider per Daytona account the operator connects. */
export function createDaytonaFactory(): ConnectedProviderFactory {
  return {
    id: PROVIDER_ID,
    displayName: 'Daytona',
    configSchema: daytonaConfigSchema,
    capabilities: DAYTONA_CAPABILITIES,
    runtimeKnobs: DAYTONA_RUNTIME_KNOBS,
    connectionSchema: { config: daytonaConnectionConfigSchema, secrets: daytonaConnectionSecretsSchema },
    connect: (connection) => createDaytonaProvider(settingsOf(connection)),
    async testConnection(connection) {
      const provider = createDaytonaProvider(settingsOf(connection));
      try {
        const availability = await provider.availability();
        return availability.available ? { ok: true } : { ok: false, reason: availability.reason };
      } finally {
        await provider.close?.();
      }
    },
  };
}
