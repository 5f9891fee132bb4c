import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';
import { durableSession, instanceOf, refused, runRecoveryFlow } from './support/recovery-flow.ts';

const runnable = requireForSuite('recovery-local', await localSkipReason());

/** Where the local provider keeps an instance (its record, its disk with the overlay upper dir). */
const instanceDir = (dataDir: string, instanceId: string) => path.join(dataDir, 'providers', 'local', 'instances', instanceId);

/** Kills the namespace's init from outside, as the OOM killer or an operator would. */
async function killInit(dataDir: string, instanceId: string): Promise<void> {
  const record = JSON.parse(await readFile(path.join(instanceDir(dataDir, instanceId), 'instance.json'), 'utf8')) as { initPid: number };
  process.kill(record.initPid, 'SIGKILL');
}

describe.skipIf(!runnable)(`recovery after compute loss on the local provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server } = useRealProviderServer((dataDir) => [createLocalProvider({ dataDir })]);
  let t: TestServer;
  beforeAll(() => {
    t = server();
  });
  const provider = () => t.server.providers.get('local')!.provider;

  it('recovers a checkpointed session whose init was killed, with every file written through Sandcast', async () => {
    await runRecoveryFlow({
      client: t.client,
      provider: provider(),
      name: 'recover-init',
      config: { diskMb: 64 },
      kill: (id) => killInit(t.dataDir, id),
    });
  });

  it('recovers a checkpointed session whose overlay upper dir was deleted', async () => {
    await runRecoveryFlow({
      client: t.client,
      provider: provider(),
      name: 'recover-upper',
      config: { diskMb: 64 },
      kill: async (id) => {
        // The disk is gone: its init dies with it and the upper dir (every write) is deleted.
        await killInit(t.dataDir, id);
        const dir = instanceDir(t.dataDir, id);
        for (const base of [path.join(dir, 'disk'), dir]) await rm(path.join(base, 'upper'), { recursive: true, force: true });
      },
    });
  });

  it('refuses durability none with compute_lost and says what to do', async () => {
    const { session, sandboxId } = await durableSession({
      client: t.client,
      provider: provider(),
      name: 'lost-none',
      config: { diskMb: 64 },
      durability: 'none',
    });
    await t.client.sessions.writeFile(session.id, '/workspace/a.txt', { content: 'a' });
    expect((await t.client.sessions.checkpoints(session.id)).checkpoints).toEqual([]);
    await killInit(t.dataDir, await instanceOf(provider(), sandboxId));
    const error = await refused(t.client.sessions.exec(session.id, { command: ['true'] }));
    expect([error.status, error.code]).toEqual([409, 'compute_lost']);
    expect(error.message).toMatch(/end the session and start a new one.*checkpointed/);
    expect((await t.client.sessions.sandbox(session.id)).observedState).toBe('lost');
    // Still refused, without touching the provider again.
    expect((await refused(t.client.sessions.readFile(session.id, '/workspace/a.txt'))).code).toBe('compute_lost');
    await t.client.sessions.end(session.id);
  });
});
