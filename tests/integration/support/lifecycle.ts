import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SandcastClient } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import { createLocalProvider } from '@sandcast/provider-local';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, expect } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './harness.ts';

/** Files a sandbox created now from the environment sees, and the image it booted from. */
export async function bootAndList(client: SandcastClient, environmentId: string, paths: string[]) {
  const sandbox = await client.sandboxes.create({ environmentId });
  const script = paths.map((p) => `test -e ${p} && echo ${p}`).join('; ');
  const seen = await client.sandboxes.exec(sandbox.id, { command: ['sh', '-c', `${script}; true`] });
  await client.sandboxes.delete(sandbox.id);
  return { imageId: sandbox.imageId, present: seen.stdout.split('\n').filter(Boolean) };
}

async function setupAndCapture(client: SandcastClient, environmentId: string, script: string) {
  const { session } = await client.customImages.startSetup(environmentId);
  const ran = await client.customImages.exec(session.id, { command: ['sh', '-c', script] });
  expect(ran, ran.stderr).toMatchObject({ exitCode: 0 });
  return (await client.customImages.finish(session.id)).template;
}

/**
 * The custom image story on a real provider: a file written during setup is in sandboxes created
 * after Finished; after Refresh and a second capture both files are; after Rollback only the
 * first; after Disable neither; cancel and expiry change nothing.
 */
export async function runCustomImageLifecycle(options: {
  client: SandcastClient;
  environmentId: string;
  /** Moves the server's clock forward (to expire a session). */
  advanceClock: (ms: number) => void;
}) {
  const { client, environmentId } = options;
  const files = ['/opt/first.txt', '/workspace/second.txt', '/opt/cancelled.txt', '/opt/expired.txt'];

  expect(await bootAndList(client, environmentId, files)).toEqual({ imageId: null, present: [] });

  const v1 = await setupAndCapture(client, environmentId, 'mkdir -p /opt && echo first > /opt/first.txt');
  expect(await bootAndList(client, environmentId, files)).toEqual({ imageId: v1.id, present: ['/opt/first.txt'] });

  const refresh = await client.customImages.startSetup(environmentId);
  expect(refresh.session.sourceTemplateId).toBe(v1.id);
  await client.customImages.exec(refresh.session.id, { command: ['sh', '-c', 'echo second > /workspace/second.txt'] });
  const changes = await client.customImages.changes(refresh.session.id);
  expect(changes.changes.map((c) => c.path)).toContain('/workspace/second.txt');
  const v2 = (await client.customImages.finish(refresh.session.id)).template;
  expect(await bootAndList(client, environmentId, files)).toEqual({ imageId: v2.id, present: ['/opt/first.txt', '/workspace/second.txt'] });

  const cancelled = await client.customImages.startSetup(environmentId);
  await client.customImages.exec(cancelled.session.id, { command: ['sh', '-c', 'echo x > /opt/cancelled.txt'] });
  await client.customImages.cancel(cancelled.session.id);

  const expiring = await client.customImages.startSetup(environmentId, { ttlSeconds: 60 });
  await client.customImages.exec(expiring.session.id, { command: ['sh', '-c', 'echo x > /opt/expired.txt'] });
  options.advanceClock(61_000);
  expect((await client.customImages.getSetup(expiring.session.id)).session.status).toBe('timed_out');
  expect(await bootAndList(client, environmentId, files)).toEqual({ imageId: v2.id, present: ['/opt/first.txt', '/workspace/second.txt'] });

  expect((await client.customImages.rollback(environmentId)).activeTemplate.id).toBe(v1.id);
  expect(await bootAndList(client, environmentId, files)).toEqual({ imageId: v1.id, present: ['/opt/first.txt'] });

  await client.customImages.disable(environmentId, { deleteProviderTemplate: false });
  expect(await bootAndList(client, environmentId, files)).toEqual({ imageId: null, present: [] });
  return { v1, v2 };
}

/**
 * For suites on a real provider: a server offering only that provider, environments on, and a
 * clock the test can move. Registers its own beforeAll/afterAll; read `server()` inside tests.
 */
/** Real-provider suites run on Postgres where there is one (CI), else PGlite. */
export const REAL_PROVIDER_DATABASE = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

export function useRealProviderServer(providers: (dataDir: string) => SandboxProvider[]) {
  const database = testDatabases().find((d) => d.kind === REAL_PROVIDER_DATABASE)!;
  let t: TestServer | undefined;
  let offsetMs = 0;
  beforeAll(async () => {
    t = await startTestServer({ database, clock: { now: () => new Date(Date.now() + offsetMs) }, providers });
    await enableEnvironments(t.client);
  });
  afterAll(async () => {
    await t?.close();
  });
  return {
    databaseKind: database.kind,
    server: () => t!,
    advanceClock: (ms: number) => {
      offsetMs += ms;
    },
  };
}

/** A capability a suite needs: null when present; under CI=true a missing one fails the run. */
export function requireForSuite(suite: string, reason: string | null): boolean {
  if (reason && process.env.CI === 'true') throw new Error(`CI=true but ${suite} cannot run: ${reason}`);
  if (reason) console.warn(`[${suite}] skipped: ${reason}`);
  return reason === null;
}

/** Why the local provider cannot run on this machine, or null. */
export async function localSkipReason(): Promise<string | null> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sandcast-local-probe-'));
  try {
    const availability = await createLocalProvider({ dataDir: dir }).availability();
    return availability.available ? null : availability.reason;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
