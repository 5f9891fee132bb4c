import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SandcastApiError, SandcastClient } from '@sandcast/client';
import { FLEET_NOT_OURS_MESSAGE } from '@sandcast/core';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { expect } from 'vitest';
import { enableEnvironments, type TestServer } from './harness.ts';

export const refused = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the API to refuse');
    },
    (e: unknown) => e as SandcastApiError,
  );

/** The admin client of an authenticated test server (its first key, from the data dir). */
export async function adminOf(t: TestServer): Promise<SandcastClient> {
  const admin = t.clientWithKey((await readFile(path.join(t.dataDir, 'admin-api-key'), 'utf8')).trim());
  await enableEnvironments(admin);
  return admin;
}

/**
 * Two agent keys, each with a session of one fleet agent bound to `environment` (bindings `main`
 * and `extra`, the same revision), on an authenticated server.
 */
export async function twoFleetSessions(
  t: TestServer,
  admin: SandcastClient,
  options: { name: string; provider: string; config: Record<string, unknown> },
) {
  const env = await admin.environments.create({
    name: options.name,
    provider: options.provider,
    config: options.config,
    // Commands run in the workspace (the default cwd), so the fake provider keeps them in its own directory.
    spec: { bootstrap: ['echo booted > boot.txt'] },
  });
  const revision = env.currentRevision.id;
  const agent = await admin.agents.create({
    name: options.name,
    capabilities: ['sandbox_fleet'],
    sandboxPolicy: {
      mode: 'selectable',
      default: 'main',
      bindings: { main: { environmentRevisionId: revision }, extra: { environmentRevisionId: revision } },
    },
  });
  const keys = await Promise.all(
    ['one', 'two'].map(async (n) => {
      const created = await admin.keys.create({ name: `${options.name} ${n}`, role: 'agent' });
      await admin.keys.setAllowedAgents(created.key.id, [agent.id]);
      return created.secret;
    }),
  );
  const [keyA, keyB] = keys as [string, string];
  const [a, b] = [t.clientWithKey(keyA), t.clientWithKey(keyB)];
  const sessionA = await a.sessions.start({ agentId: agent.id });
  const sessionB = await b.sessions.start({ agentId: agent.id });
  return { env, agent, a, b, keyA, keyB, sessionA, sessionB };
}

/**
 * The fleet on a real provider, over REST: two sessions of two agent keys each create resource
 * sandboxes, run commands and move files in them; each sees only its own and the other's ids get
 * the one refusal; the primary sandbox never moves; stop and start keep the files; ending a
 * session removes its resource sandboxes' compute.
 */
export async function runFleetFlow(options: {
  t: TestServer;
  admin: SandcastClient;
  provider: SandboxProvider;
  name: string;
  config: Record<string, unknown>;
}): Promise<void> {
  const { t, admin, provider } = options;
  const { a, b, sessionA, sessionB } = await twoFleetSessions(t, admin, {
    name: options.name,
    provider: provider.id,
    config: options.config,
  });
  const primaryBefore = await a.sessions.sandbox(sessionA.id);
  expect(primaryBefore.observedState, primaryBefore.failureReason ?? '').toBe('running');

  const mine = await a.fleet.create(sessionA.id, { use: 'extra' });
  expect(mine, mine.failureReason ?? '').toMatchObject({ sessionId: sessionA.id, bindingName: 'extra', observedState: 'running' });
  expect(mine.id).toMatch(/^rsb_[0-9a-f]{16}$/);
  // Bootstrap ran in it as in the primary: it is a sandbox of the same pinned revision.
  expect((await a.fleet.readFile(sessionA.id, mine.id, '/workspace/boot.txt')).content).toBe('booted\n');

  const wrote = await a.fleet.exec(sessionA.id, mine.id, { command: ['sh', '-c', 'echo resource > where.txt; cat where.txt'] });
  expect(wrote).toMatchObject({ exitCode: 0, stdout: 'resource\n' });
  await a.fleet.writeFile(sessionA.id, mine.id, '/workspace/notes.txt', { content: 'fleet file\n' });
  expect((await a.fleet.readFile(sessionA.id, mine.id, '/workspace/notes.txt')).content).toBe('fleet file\n');

  // The primary is where it was and does not see the resource sandbox's files.
  const primaryAfter = await a.sessions.sandbox(sessionA.id);
  expect(primaryAfter.sandboxId).toBe(primaryBefore.sandboxId);
  expect((await a.sessions.get(sessionA.id)).primarySandboxId).toBe(primaryBefore.sandboxId);
  const inPrimary = await a.sessions.exec(sessionA.id, { command: ['sh', '-c', 'test -e where.txt && echo yes || echo no'] });
  expect(inPrimary.stdout).toBe('no\n');

  // Isolation: b has its own, sees only its own, and a's id is refused exactly as an unknown one.
  expect(await b.fleet.list(sessionB.id)).toEqual([]);
  const theirs = await b.fleet.create(sessionB.id);
  expect((await b.fleet.list(sessionB.id)).map((s) => s.id)).toEqual([theirs.id]);
  expect((await a.fleet.list(sessionA.id)).map((s) => s.id)).toEqual([mine.id]);
  for (const attempt of [
    () => b.fleet.inspect(sessionB.id, mine.id),
    () => b.fleet.exec(sessionB.id, mine.id, { command: ['true'] }),
    () => b.fleet.readFile(sessionB.id, mine.id, '/workspace/notes.txt'),
    () => b.fleet.writeFile(sessionB.id, mine.id, '/workspace/x', { content: 'x' }),
    () => b.fleet.manage(sessionB.id, mine.id, { action: 'delete' }),
    () => b.fleet.inspect(sessionB.id, 'rsb_0000000000000000'),
  ]) {
    const error = await refused(attempt());
    expect([error.status, error.code, error.message]).toEqual([404, 'not_found', FLEET_NOT_OURS_MESSAGE]);
  }
  // a's session itself is not b's to name.
  expect((await refused(b.fleet.list(sessionA.id))).status).toBe(404);
  expect((await a.fleet.inspect(sessionA.id, mine.id)).observedState).toBe('running');

  if (provider.capabilities.stopStart) {
    expect((await a.fleet.manage(sessionA.id, mine.id, { action: 'stop' })).observedState).toBe('stopped');
    const stopped = await refused(a.fleet.exec(sessionA.id, mine.id, { command: ['true'] }));
    expect(stopped.status).toBe(409);
    expect(stopped.message).toContain(mine.id);
    expect((await a.fleet.manage(sessionA.id, mine.id, { action: 'start' })).observedState).toBe('running');
    expect((await a.fleet.readFile(sessionA.id, mine.id, '/workspace/notes.txt')).content).toBe('fleet file\n');
  }

  // Ending the session takes its resource sandboxes' compute with it.
  const ownerIds = async () => new Set((await provider.listInstances()).map((i) => i.ownerId));
  const sandboxIdOf = async (logicalId: string) => (await admin.fleet.overview()).find((row) => row.logicalId === logicalId)!.id;
  const mineSandboxId = await sandboxIdOf(mine.id);
  expect((await ownerIds()).has(mineSandboxId)).toBe(true);
  await a.sessions.end(sessionA.id);
  expect((await ownerIds()).has(mineSandboxId)).toBe(false);
  const rows = await admin.fleet.overview({ includeDeleted: true });
  expect(rows.find((row) => row.id === mineSandboxId)).toMatchObject({ role: 'resource', observedState: 'deleted', attention: [] });
  await b.sessions.end(sessionB.id);
}
