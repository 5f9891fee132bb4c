import type { SandcastApiError, SandcastClient } from '@sandcast/client';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { expect } from 'vitest';

/** The instance id of the compute the provider runs for a sandbox now. */
export async function instanceOf(provider: SandboxProvider, sandboxId: string): Promise<string> {
  const found = (await provider.listInstances()).filter((i) => i.ownerId === sandboxId);
  expect(found).toHaveLength(1);
  return found[0]!.instanceId;
}

/** A session on an environment of `durability`; the sandbox id and its provider's instance id. */
export async function durableSession(options: {
  client: SandcastClient;
  provider: SandboxProvider;
  name: string;
  config: Record<string, unknown>;
  durability: 'none' | 'checkpointed';
}) {
  const { client, provider, name } = options;
  const env = await client.environments.create({
    name,
    provider: provider.id,
    config: options.config,
    // Replayed on every replacement: its file lives outside the workspace, so only the replay brings it back.
    spec: { durability: options.durability, bootstrap: ['mkdir -p /opt/boot && date +%s%N >> /opt/boot/runs'] },
  });
  const agent = await client.agents.create({
    name,
    sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
  });
  const session = await client.sessions.start({ agentId: agent.id });
  const view = await client.sessions.sandbox(session.id);
  expect(view, view.failureReason ?? '').toMatchObject({ observedState: 'running', durability: options.durability });
  return { session, sandboxId: session.primarySandboxId! };
}

export const refused = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the API to refuse');
    },
    (e: unknown) => e as SandcastApiError,
  );

/**
 * Recovery on a real provider: files written through the session (a file write and a command)
 * survive the compute being killed from outside between two operations; the next operation
 * recovers onto new compute, sees every file, replays bootstrap, and says `processStateLost`.
 * Then a restore to the first checkpoint rolls the workspace back, and a second loss restores
 * that one (the restore made it current).
 */
export async function runRecoveryFlow(options: {
  client: SandcastClient;
  provider: SandboxProvider;
  name: string;
  config: Record<string, unknown>;
  /** Kills the compute from outside Sandcast. */
  kill: (instanceId: string) => Promise<void>;
}): Promise<void> {
  const { client, provider } = options;
  const { session, sandboxId } = await durableSession({ ...options, durability: 'checkpointed' });

  await client.sessions.writeFile(session.id, '/workspace/notes.txt', { content: 'written through the session\n' });
  const ran = await client.sessions.exec(session.id, {
    command: [
      'sh',
      '-c',
      'mkdir -p /workspace/src && echo two > /workspace/src/b.txt && chown 1000:1001 /workspace/src/b.txt && ln -s ../notes.txt /workspace/src/link && echo gone > /tmp/outside',
    ],
  });
  expect(ran).toMatchObject({ exitCode: 0 });
  expect(ran.recovered).toBeUndefined();
  const taken = await client.sessions.checkpoints(session.id);
  expect(taken.checkpoints.map((c) => c.trigger)).toEqual(['auto', 'auto']);
  const [second, first] = taken.checkpoints;
  expect(second!.current).toBe(true);
  expect(taken.currentCheckpointId).toBe(second!.id);
  expect(second!.changedPaths).toBeGreaterThanOrEqual(3);

  await options.kill(await instanceOf(provider, sandboxId));

  const after = await client.sessions.exec(session.id, {
    command: [
      'sh',
      '-c',
      'cat /workspace/notes.txt /workspace/src/b.txt; readlink /workspace/src/link; cat /tmp/outside 2>/dev/null || echo no-outside; wc -l < /opt/boot/runs; stat -c %u:%g /workspace/src/b.txt',
    ],
  });
  expect(after.recovered).toEqual({ fromGeneration: 1, toGeneration: 2, checkpointId: second!.id, processStateLost: true });
  expect(after.stdout.split('\n')).toEqual(['written through the session', 'two', '../notes.txt', 'no-outside', '1', '1000:1001', '']);
  const view = await client.sessions.sandbox(session.id);
  expect(view).toMatchObject({ observedState: 'running', generation: 2 });
  const actions = (await client.activity({})).filter((a) => a.subjectId === sandboxId).map((a) => a.action);
  expect(actions.filter((a) => a === 'sandbox.instance_lost')).toHaveLength(1);
  expect(actions.filter((a) => a === 'sandbox.recovered')).toHaveLength(1);

  // Roll back to the first checkpoint: only the file write is left.
  const progress: string[] = [];
  const restored = await client.sessions.restore(session.id, first!.id, { onProgress: (p) => progress.push(p.phase) });
  expect(restored.checkpoint).toMatchObject({ id: first!.id, current: true });
  expect(progress.length).toBeGreaterThan(0);
  const listed = await client.sessions.exec(session.id, { command: ['sh', '-c', 'cd /workspace && find . | sort'] });
  expect(listed.stdout.split('\n').filter(Boolean)).toEqual(['.', './notes.txt']);

  // The restored checkpoint is what the next recovery brings back, not the newest one.
  const current = (await client.sessions.checkpoints(session.id)).currentCheckpointId;
  await options.kill(await instanceOf(provider, sandboxId));
  const again = await client.sessions.readFile(session.id, '/workspace/notes.txt');
  expect(again.content).toBe('written through the session\n');
  expect(again.recovered).toMatchObject({ fromGeneration: 2, toGeneration: 3, checkpointId: current, processStateLost: true });
  const gone = await client.sessions.exec(session.id, { command: ['sh', '-c', 'test -e /workspace/src && echo present || echo absent'] });
  expect(gone.stdout).toBe('absent\n');

  await client.sessions.end(session.id);
  expect((await provider.listInstances()).some((i) => i.ownerId === sandboxId)).toBe(false);
}
