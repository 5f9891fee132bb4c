import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import { describe, expect, it } from 'vitest';
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
      // The port relay enters the new init's network namespace: a listener started after the restart answers.
      afterRestart: async (sandbox) => {
        const listen =
          "require('net').createServer((s) => s.end('from inside\\n')).listen(8099, '127.0.0.1', () => require('fs').writeFileSync('/tmp/listening', ''))";
        const listening = await t.client.sandboxes.exec(sandbox.id, {
          command: [
            'sh',
            '-c',
            'nohup node -e "$1" >/tmp/listen.log 2>&1 & for i in $(seq 200); do [ -f /tmp/listening ] && exit 0; sleep 0.05; done; exit 1',
            'sh',
            listen,
          ],
        });
        expect(listening.exitCode, listening.stderr).toBe(0);
        const provider = t.server.providers.get('local')!.provider;
        const stream = await provider.openPortStream!(sandbox.providerInstanceId!, 8099);
        let text = '';
        for await (const chunk of stream) text += String(chunk);
        expect(text).toBe('from inside\n');
      },
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
