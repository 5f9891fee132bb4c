import { expect } from 'vitest';
import type { TestServer } from './harness.ts';

/**
 * Warm pool and fork on a real provider, through the API: the pool fills, a create claims a
 * member whose commands run at once, the pool refills, members past their age are replaced and a
 * size of 0 drains it; a fork of a sandbox carries its files into every fork, a write in one is
 * seen nowhere else, and deleting the source leaves the forks whole. Passes are run directly.
 */
export async function runPoolAndFork(options: {
  t: TestServer;
  advanceClock: (ms: number) => void;
  provider: string;
  config: Record<string, unknown>;
}) {
  const { t } = options;
  const { client } = t;
  const pass = async () => {
    await t.server.reconciler.settled();
    await t.server.reconciler.runOnce();
    await t.server.reconciler.runOnce();
  };
  const members = async (environmentId: string) => t.server.store.repos.warmPools.members(environmentId);
  const env = await client.environments.create({
    name: `pool-${options.provider}`,
    provider: options.provider,
    config: options.config,
    spec: { warmPool: { size: 2, maxAgeSeconds: 60 } },
  });
  await pass();
  const filled = await members(env.id);
  expect(filled.map((m) => m.status)).toEqual(['running', 'running']);
  const provider = t.server.providers.get(options.provider)!.provider;
  for (const member of filled) expect((await provider.inspect(member.providerInstanceId!)).status).toBe('running');

  const claimed = await client.sandboxes.create({ environmentId: env.id });
  expect(claimed.source).toBe('warm_pool');
  expect(filled.map((m) => m.id)).toContain(claimed.id);
  expect(await client.sandboxes.exec(claimed.id, { command: ['sh', '-c', 'echo before > /workspace/shared.txt'] })).toMatchObject({
    exitCode: 0,
  });
  await pass();
  const refilled = await members(env.id);
  expect(refilled).toHaveLength(2);
  expect(refilled.map((m) => m.id)).not.toContain(claimed.id);

  options.advanceClock(61_000);
  await pass();
  const renewed = await members(env.id);
  expect(renewed).toHaveLength(2);
  expect(renewed.filter((m) => refilled.some((r) => r.id === m.id))).toEqual([]);
  // Drained members' compute is gone.
  for (const old of refilled) expect((await provider.inspect(old.providerInstanceId!)).status).toBe('missing');

  const answer = await client.sandboxes.fork(claimed.id, 2);
  expect(answer.processesCopied).toBe(false);
  const [first, second] = answer.sandboxes as [(typeof answer.sandboxes)[0], (typeof answer.sandboxes)[0]];
  for (const fork of [first, second]) {
    expect(fork).toMatchObject({ source: 'fork', forkedFromId: claimed.id, imageId: claimed.imageId, status: 'running' });
    expect((await client.sandboxes.exec(fork.id, { command: ['cat', '/workspace/shared.txt'] })).stdout).toBe('before\n');
  }
  await client.sandboxes.exec(first.id, { command: ['sh', '-c', 'echo first > /workspace/shared.txt'] });
  await client.sandboxes.exec(claimed.id, { command: ['sh', '-c', 'echo after > /workspace/after.txt'] });
  const look = ['sh', '-c', 'cat /workspace/shared.txt; ls /workspace'];
  expect((await client.sandboxes.exec(second.id, { command: look })).stdout).toBe('before\nshared.txt\n');
  expect((await client.sandboxes.exec(claimed.id, { command: look })).stdout).toBe('before\nafter.txt\nshared.txt\n');
  await client.sandboxes.delete(claimed.id);
  expect((await client.sandboxes.exec(first.id, { command: look })).stdout).toBe('first\nshared.txt\n');

  await client.environments.update(env.id, { spec: { warmPool: { size: 0 } } });
  await pass();
  expect(await members(env.id)).toEqual([]);
  for (const sandbox of await client.sandboxes.list()) await client.sandboxes.delete(sandbox.id);
}
