import type { Sandbox } from '@sandcast/core';
import { expect } from 'vitest';
import type { TestServer } from './harness.ts';

/** The sandbox's activity, oldest first, without its creation. */
async function transitions(t: TestServer, sandboxId: string): Promise<string[]> {
  const all = await t.server.store.repos.activity.list({ limit: 1000 });
  return all
    .filter((a) => a.subjectId === sandboxId && a.action !== 'sandbox.created')
    .map((a) => a.action)
    .reverse();
}

/**
 * The lifecycle on a real provider: stop → start keeps what the sandbox wrote (and its init comes
 * back: commands run again); the idle policy stops it once its configured idle time passed; compute
 * killed from outside reads as `lost` after one reconcile pass. Passes are triggered directly.
 */
export async function runSandboxLifecycle(options: {
  t: TestServer;
  advanceClock: (ms: number) => void;
  provider: string;
  config: Record<string, unknown>;
  /** Kills the sandbox's compute behind the provider's back (`docker rm -f`, killing its init). */
  killCompute: (sandbox: Sandbox) => Promise<void>;
  /** More checks on the sandbox once it started again (what else must come back). */
  afterRestart?: ((sandbox: Sandbox) => Promise<void>) | undefined;
}) {
  const { t } = options;
  const { client } = t;
  const env = await client.environments.create({
    name: `lifecycle-${options.provider}`,
    provider: options.provider,
    config: options.config,
  });
  // A short idle time in the pinned spec (the environments API does not take a spec yet).
  const current = (await t.server.store.repos.environments.get(env.id))!;
  await t.server.store.repos.environments.update(env.id, {
    expectedRevisionId: current.currentRevision.id,
    spec: { ...current.spec, lifecycle: { idleAfterSeconds: 30, idleAction: 'stop' } },
  });

  const sandbox = await client.sandboxes.create({ environmentId: env.id });
  const row = (await t.server.store.repos.sandboxes.get(sandbox.id))!;
  const wrote = await client.sandboxes.exec(sandbox.id, {
    command: ['sh', '-c', 'echo kept > /workspace/kept.txt && mkdir -p /opt/x && echo deep > /opt/x/f'],
  });
  expect(wrote.exitCode, wrote.stderr).toBe(0);

  // Stop → start keeps the files, on the same compute.
  expect(await client.sandboxes.stop(sandbox.id)).toMatchObject({ desiredStatus: 'stopped', status: 'stopped' });
  const refused = await client.sandboxes.exec(sandbox.id, { command: ['true'] }).then(
    () => null,
    (error: { status?: number }) => error,
  );
  expect(refused?.status).toBe(409);
  expect(await client.sandboxes.start(sandbox.id)).toMatchObject({ desiredStatus: 'ready', status: 'running' });
  expect((await t.server.store.repos.sandboxes.get(sandbox.id))!.providerInstanceId).toBe(row.providerInstanceId);
  const read = await client.sandboxes.exec(sandbox.id, {
    command: ['sh', '-c', 'cat /workspace/kept.txt /opt/x/f; echo after > after.txt; cat after.txt'],
  });
  expect(read).toMatchObject({ exitCode: 0, stdout: 'kept\ndeep\nafter\n' });
  await options.afterRestart?.((await t.server.store.repos.sandboxes.get(sandbox.id))!);

  // The idle policy: nothing before the idle time, a stop after it.
  await t.server.reconciler.runOnce();
  expect((await client.sandboxes.get(sandbox.id)).status).toBe('running');
  options.advanceClock(31_000);
  expect((await t.server.reconciler.runOnce()).stepped).toBeGreaterThanOrEqual(1);
  expect(await client.sandboxes.get(sandbox.id)).toMatchObject({ desiredStatus: 'stopped', status: 'stopped' });
  expect(await client.sandboxes.start(sandbox.id)).toMatchObject({ status: 'running' });
  expect((await client.sandboxes.exec(sandbox.id, { command: ['cat', '/workspace/after.txt'] })).stdout).toBe('after\n');

  // Killed from outside: lost after the next pass (read from the record, not through a request).
  await options.killCompute((await t.server.store.repos.sandboxes.get(sandbox.id))!);
  await t.server.reconciler.runOnce();
  expect(await t.server.store.repos.sandboxes.get(sandbox.id)).toMatchObject({ desiredStatus: 'ready', status: 'lost' });
  expect(await transitions(t, sandbox.id)).toEqual([
    'sandbox.stopped',
    'sandbox.started',
    'sandbox.idle_stopped',
    'sandbox.started',
    'sandbox.lost',
  ]);
  expect((await client.sandboxes.delete(sandbox.id)).status).toBe('deleted');
}
