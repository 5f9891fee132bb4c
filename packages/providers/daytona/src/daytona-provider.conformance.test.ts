import { describeProviderConformance } from '@sandcast/provider-sdk/testing';
import { afterAll, expect, it } from 'vitest';
import { createDaytonaProvider } from './daytona-provider.ts';
import { type FakeDaytona, fakeDaytonaSkipReason, startFakeDaytona } from './testing/index.ts';

let fake: FakeDaytona | null = null;

describeProviderConformance({
  name: 'daytona (local fake of the Daytona API)',
  createProvider: async () => {
    fake = await startFakeDaytona();
    return createDaytonaProvider({ apiUrl: fake.apiUrl, apiKey: fake.apiKey });
  },
  config: { autoStopMinutes: 0 },
  skipReason: fakeDaytonaSkipReason,
  vanish: async (_provider, instanceId) => {
    await fake!.vanish(instanceId);
  },
  isolatedRoot: true,
  timeoutMs: 60_000,
});

it('the provider called only what the fake implements', () => {
  if (fake) expect(fake.unhandled).toEqual([]);
});

afterAll(async () => {
  await fake?.close();
});
