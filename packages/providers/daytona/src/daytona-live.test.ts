import { describeProviderConformance } from '@sandcast/provider-sdk/testing';
import { describe, it } from 'vitest';
import { createDaytonaProvider } from './daytona-provider.ts';

// The real Daytona, only with a key: DAYTONA_API_KEY (and DAYTONA_API_URL for a self-hosted one,
// DAYTONA_SNAPSHOT for a snapshot other than the account default). Without a key the suite skips
// and says why — under CI=true too: CI has no Daytona account, and this is the one suite allowed
// to skip there.
const apiKey = process.env.DAYTONA_API_KEY;
const reason = apiKey ? null : 'DAYTONA_API_KEY is not set: the live Daytona suite needs a real account';
if (reason) console.warn(`[daytona-live] skipped: ${reason}`);

if (apiKey) {
  describeProviderConformance({
    name: 'daytona (live)',
    createProvider: async () => createDaytonaProvider({ apiUrl: process.env.DAYTONA_API_URL ?? 'https://app.daytona.io/api', apiKey }),
    config: { autoStopMinutes: 15, ...(process.env.DAYTONA_SNAPSHOT ? { snapshot: process.env.DAYTONA_SNAPSHOT } : {}) },
    vanish: async (provider, instanceId) => provider.destroy(instanceId),
    isolatedRoot: true,
    timeoutMs: 300_000,
  });
} else {
  describe.skip(`daytona (live): ${reason}`, () => {
    it('needs DAYTONA_API_KEY', () => undefined);
  });
}
