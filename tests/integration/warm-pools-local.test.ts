import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import { describe, it } from 'vitest';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';
import { runPoolAndFork } from './support/pool-flow.ts';

const runnable = requireForSuite('warm-pools-local', await localSkipReason());

describe.skipIf(!runnable)(`warm pools and fork on the local provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server, advanceClock } = useRealProviderServer((dataDir) => [createLocalProvider({ dataDir })]);

  it('fills, claims, refills, ages out and drains; forks carry the files and are isolated', async () => {
    await runPoolAndFork({ t: server(), advanceClock, provider: 'local', config: {} });
  }, 300_000);
});
