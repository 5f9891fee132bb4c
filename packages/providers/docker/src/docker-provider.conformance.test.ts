import { describeProviderConformance } from '@sandcast/provider-sdk/testing';
import { createDockerProvider } from './docker-provider.ts';
import { dockerSkipReason, TEST_IMAGE, testDocker } from './test-support/test-engine.ts';

describeProviderConformance({
  name: 'docker',
  createProvider: async () => createDockerProvider({ dataDir: '/tmp/sandcast-docker-conformance' }),
  config: { image: TEST_IMAGE, cpu: 1, memoryMb: 512, pidsLimit: 256 },
  skipReason: dockerSkipReason,
  // As an outside `docker rm -f` would.
  vanish: async (_provider, instanceId) => {
    await testDocker().getContainer(instanceId).remove({ force: true, v: true });
  },
  isolatedRoot: true,
  timeoutMs: 120_000,
});
