import { createDockerProvider } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import { beforeAll, describe, it } from 'vitest';
import type { TestServer } from './support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';
import { runSessionFlow } from './support/session-flow.ts';

const runnable = requireForSuite('sessions-docker', await dockerSkipReason());

describe.skipIf(!runnable)(`a session on the Docker provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server } = useRealProviderServer((dataDir) => [createDockerProvider({ dataDir })]);
  let t: TestServer;
  beforeAll(() => {
    t = server();
  });

  it('starts (container and bootstrap), runs commands, moves files both ways, ends with the container gone', async () => {
    await runSessionFlow({
      client: t.client,
      provider: t.server.providers.get('docker')!.provider,
      name: 'session-docker',
      config: { image: TEST_IMAGE },
    });
  });
});
