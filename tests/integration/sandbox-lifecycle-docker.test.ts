import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createDockerProvider } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import { describe, it } from 'vitest';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';
import { runSandboxLifecycle } from './support/sandbox-lifecycle.ts';

const runnable = requireForSuite('sandbox-lifecycle-docker', await dockerSkipReason());

describe.skipIf(!runnable)(`the sandbox lifecycle on the Docker provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server, advanceClock } = useRealProviderServer((dataDir) => [createDockerProvider({ dataDir })]);

  it('stop → start keeps files; the idle policy stops it; `docker rm -f` makes it lost', async () => {
    await runSandboxLifecycle({
      t: server(),
      advanceClock,
      provider: 'docker',
      config: { image: TEST_IMAGE },
      killCompute: async (sandbox) => {
        await promisify(execFile)('docker', ['rm', '-f', sandbox.providerInstanceId!]);
      },
    });
  }, 180_000);
});
