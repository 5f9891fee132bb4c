import { createDockerProvider } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import { describe, it } from 'vitest';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';
import { runPoolAndFork } from './support/pool-flow.ts';

const runnable = requireForSuite('warm-pools-docker', await dockerSkipReason());

describe.skipIf(!runnable)(`warm pools and fork on the Docker provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server, advanceClock } = useRealProviderServer((dataDir) => [createDockerProvider({ dataDir })]);

  it('fills, claims, refills, ages out and drains; forks (commit, then runs) carry the files and are isolated', async () => {
    await runPoolAndFork({ t: server(), advanceClock, provider: 'docker', config: { image: TEST_IMAGE } });
  }, 300_000);
});
