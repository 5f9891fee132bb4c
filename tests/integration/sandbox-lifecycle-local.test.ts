import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import { describe, it } from 'vitest';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';
import { runSandboxLifecycle } from './support/sandbox-lifecycle.ts';

const runnable = requireForSuite('sandbox-lifecycle-local', await localSkipReason());

describe.skipIf(!runnable)(`the sandbox lifecycle on the local provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server, advanceClock } = useRealProviderServer((dataDir) => [createLocalProvider({ dataDir })]);

  it('stop → start keeps files; the idle policy stops it; killing its init from the host makes it lost', async () => {
    const t = server();
    await runSandboxLifecycle({
      t,
      advanceClock,
      provider: 'local',
      config: {},
      // The provider records the sandbox's pid 1 (on the host) in the instance's record.
      killCompute: async (sandbox) => {
        const record = path.join(t.dataDir, 'providers/local/instances', sandbox.providerInstanceId!, 'instance.json');
        const { initPid } = JSON.parse(await readFile(record, 'utf8')) as { initPid: number };
        process.kill(initPid, 'SIGKILL');
        for (let i = 0; i < 200; i++) {
          try {
            process.kill(initPid, 0);
          } catch {
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        throw new Error(`the sandbox init ${initPid} did not die`);
      },
    });
  }, 180_000);
});
