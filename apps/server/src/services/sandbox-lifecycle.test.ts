import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { IdleAction, Principal, Sandbox } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider, type FakeProvider } from '@sandcast/provider-fake';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppServices, buildApp } from '../app.ts';
import { createMovableClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { createProviderRegistry } from '../providers/provider-registry.ts';
import { createReconciler, type Reconciler } from '../reconcilers/reconciler.ts';
import { createSandboxLifecycle } from './sandbox-lifecycle.ts';
import { createSandboxesService } from './sandboxes.service.ts';
import { createSecretBox } from './secrets.ts';

const ADMIN: Principal = { role: 'admin', keyId: null };
const quiet = new Writable({ write: (_chunk, _encoding, callback) => callback() });

/** Every stop and start the fake is asked for, by instance. */
function counting(fake: FakeProvider) {
  const calls: string[] = [];
  const provider: SandboxProvider = {
    ...fake,
    stop: async (instanceId) => {
      calls.push(`stop ${instanceId}`);
      return fake.stop!(instanceId);
    },
    start: async (instanceId) => {
      calls.push(`start ${instanceId}`);
      return fake.start!(instanceId);
    },
  };
  return { provider, calls };
}

async function caught(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: { code?: string; message: string }) => error,
  );
}

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`the sandbox lifecycle converges [${database.kind}]`, () => {
    let store: Store;
    let dataDir: string;
    let fake: FakeProvider;
    let calls: string[];
    let services: AppServices;
    let reconciler: Reconciler;
    const clock = createMovableClock();

    beforeAll(async () => {
      store = await database.open();
      dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-lifecycle-'));
      fake = createFakeProvider({ dataDir });
      const counted = counting(fake);
      calls = counted.calls;
      const providers = createProviderRegistry([counted.provider]);
      const config = loadConfig({ SANDCAST_DATA_DIR: dataDir, SANDCAST_ENABLE_FAKE_PROVIDER: '1', SANDCAST_SSH_PORT: 'off' });
      ({ services } = buildApp({ config, store, providers, secrets: createSecretBox(Buffer.alloc(32, 7)), clock, logStream: quiet }));
      reconciler = createReconciler({
        store,
        providers,
        setupSessions: services.setupSessions,
        lifecycle: services.sandboxLifecycle,
        log: silentLog(),
        intervalMs: 60_000,
        clock,
      });
    });

    afterAll(async () => {
      await reconciler?.stop();
      await fake?.close?.();
      await store?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    let counter = 0;
    /** A sandbox of a fresh environment whose spec says `idleAction` after `idleAfterSeconds`. */
    const sandboxWith = async (
      lifecycle: { idleAfterSeconds: number; idleAction: IdleAction } = { idleAfterSeconds: 3600, idleAction: 'stop' },
      durability: 'none' | 'checkpointed' = 'none',
    ) => {
      const env = await services.environments.create({ name: `lifecycle-${counter++}`, provider: 'fake', config: {} }, ADMIN);
      const current = (await store.repos.environments.get(env.id))!;
      await store.repos.environments.update(env.id, {
        expectedRevisionId: current.currentRevision.id,
        spec: { ...current.spec, lifecycle, durability },
      });
      return services.sandboxes.create({ environmentId: env.id }, ADMIN);
    };
    /** The sandbox's activity, newest first, without its creation. */
    const actions = async (sandboxId: string) =>
      (await store.repos.activity.list({ limit: 1000 }))
        .filter((a) => a.subjectId === sandboxId && a.action !== 'sandbox.created')
        .map((a) => a.action);
    const read = async (id: string) => (await store.repos.sandboxes.get(id))!;
    const cat = async (sandbox: Sandbox, file: string) =>
      (await services.sandboxes.exec(sandbox.id, { command: ['cat', file] }, ADMIN)).stdout;

    it('stop keeps the files, start brings them back; both converge before they answer', async () => {
      const sandbox = await sandboxWith();
      await services.sandboxes.exec(sandbox.id, { command: ['sh', '-c', 'echo kept > kept.txt'] }, ADMIN);
      const stopped = await services.sandboxes.stop(sandbox.id, ADMIN);
      expect(stopped).toMatchObject({ desiredStatus: 'stopped', status: 'stopped', generation: sandbox.generation });
      expect((await fake.inspect(sandbox.providerInstanceId!)).status).toBe('stopped');
      const refused = await caught(services.sandboxes.exec(sandbox.id, { command: ['true'] }, ADMIN));
      expect(refused).toMatchObject({ code: 'conflict' });
      expect(refused.message).toContain('is stopped');

      const started = await services.sandboxes.start(sandbox.id, ADMIN);
      expect(started).toMatchObject({ desiredStatus: 'ready', status: 'running', providerInstanceId: sandbox.providerInstanceId });
      expect(await cat(started, 'kept.txt')).toBe('kept\n');
      expect(await actions(sandbox.id)).toEqual(['sandbox.started', 'sandbox.stopped']);
    });

    it('stopping a stopped sandbox and starting a running one change nothing', async () => {
      const sandbox = await sandboxWith();
      await services.sandboxes.stop(sandbox.id, ADMIN);
      const before = calls.length;
      expect((await services.sandboxes.stop(sandbox.id, ADMIN)).status).toBe('stopped');
      await services.sandboxes.start(sandbox.id, ADMIN);
      expect((await services.sandboxes.start(sandbox.id, ADMIN)).status).toBe('running');
      expect(calls.slice(before)).toEqual([`start ${sandbox.providerInstanceId}`]);
      expect(await actions(sandbox.id)).toEqual(['sandbox.started', 'sandbox.stopped']);
    });

    it('two stops at once call the provider once: steps on a sandbox are single-flight', async () => {
      const sandbox = await sandboxWith();
      const before = calls.length;
      const both = await Promise.all([services.sandboxes.stop(sandbox.id, ADMIN), services.sandboxes.stop(sandbox.id, ADMIN)]);
      expect(both.map((s) => s.status)).toEqual(['stopped', 'stopped']);
      expect(calls.slice(before)).toEqual([`stop ${sandbox.providerInstanceId}`]);
      expect(await actions(sandbox.id)).toEqual(['sandbox.stopped']);
    });

    it('interleaved stops and starts all answer, and the record ends where the provider is', async () => {
      const sandbox = await sandboxWith();
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          i % 2 === 0 ? services.sandboxes.stop(sandbox.id, ADMIN) : services.sandboxes.start(sandbox.id, ADMIN),
        ),
      );
      for (const answer of answers) expect(['stopped', 'running']).toContain(answer.status);
      const final = await read(sandbox.id);
      expect(final.status).toBe(final.desiredStatus === 'stopped' ? 'stopped' : 'running');
      expect((await fake.inspect(sandbox.providerInstanceId!)).status).toBe(final.status);
      const recorded = await actions(sandbox.id);
      // Every recorded transition alternates: never two stops or two starts in a row.
      for (let i = 1; i < recorded.length; i++) expect(recorded[i]).not.toBe(recorded[i - 1]);
    });

    it('the idle policy stops a sandbox once its idle time has passed since the last activity', async () => {
      const sandbox = await sandboxWith({ idleAfterSeconds: 60, idleAction: 'stop' });
      await reconciler.runOnce();
      expect((await read(sandbox.id)).status).toBe('running');
      clock.advance(40_000);
      // An exec is activity: the idle time counts again from it.
      await services.sandboxes.exec(sandbox.id, { command: ['true'] }, ADMIN);
      clock.advance(40_000);
      await reconciler.runOnce();
      expect((await read(sandbox.id)).status).toBe('running');
      clock.advance(21_000);
      await reconciler.runOnce();
      expect(await read(sandbox.id)).toMatchObject({ desiredStatus: 'stopped', status: 'stopped' });
      expect(await actions(sandbox.id)).toEqual(['sandbox.idle_stopped']);
      // Started by hand, it counts from the start.
      await services.sandboxes.start(sandbox.id, ADMIN);
      await reconciler.runOnce();
      expect((await read(sandbox.id)).status).toBe('running');
    });

    it('checkpoint_and_stop of a checkpointed sandbox checkpoints the workspace, then stops', async () => {
      const sandbox = await sandboxWith({ idleAfterSeconds: 30, idleAction: 'checkpoint_and_stop' }, 'checkpointed');
      await fake.writeFile(sandbox.providerInstanceId!, '/workspace/kept.txt', Buffer.from('kept\n'));
      clock.advance(31_000);
      await reconciler.runOnce();
      const stopped = await read(sandbox.id);
      expect(stopped.status).toBe('stopped');
      const [idle] = await store.repos.checkpoints.listAttached(sandbox.id);
      expect(idle).toMatchObject({ trigger: 'idle', fileCount: 1, changedPaths: 1 });
      expect(stopped.currentCheckpointId).toBe(idle!.id);
      expect(await actions(sandbox.id)).toEqual(['sandbox.idle_stopped', 'sandbox.checkpointed']);
    });

    it('checkpoint_and_stop stops like stop without checkpoints; keep_running keeps running', async () => {
      const checkpointed = await sandboxWith({ idleAfterSeconds: 30, idleAction: 'checkpoint_and_stop' });
      const kept = await sandboxWith({ idleAfterSeconds: 30, idleAction: 'keep_running' });
      clock.advance(31_000);
      await reconciler.runOnce();
      expect((await read(checkpointed.id)).status).toBe('stopped');
      expect((await read(kept.id)).status).toBe('running');
    });

    it('compute that vanished goes lost on the next pass, and stays lost', async () => {
      const sandbox = await sandboxWith();
      await fake.vanish(sandbox.providerInstanceId!);
      await reconciler.runOnce();
      expect(await read(sandbox.id)).toMatchObject({ desiredStatus: 'ready', status: 'lost' });
      await reconciler.runOnce();
      expect((await read(sandbox.id)).status).toBe('lost');
      expect(await actions(sandbox.id)).toEqual(['sandbox.lost']);
      expect(await caught(services.sandboxes.start(sandbox.id, ADMIN))).toMatchObject({ code: 'conflict' });
      expect((await services.sandboxes.delete(sandbox.id, ADMIN)).status).toBe('deleted');
    });

    it('a sandbox stopped behind our back is recorded stopped, then started again toward ready', async () => {
      const sandbox = await sandboxWith();
      await fake.stop!(sandbox.providerInstanceId!);
      await reconciler.runOnce();
      expect((await read(sandbox.id)).status).toBe('stopped');
      await reconciler.runOnce();
      expect((await read(sandbox.id)).status).toBe('running');
      expect(await actions(sandbox.id)).toEqual(['sandbox.started', 'sandbox.stopped']);
    });

    it('a sandbox its provider reports broken goes failed with the reason', async () => {
      const sandbox = await sandboxWith();
      fake.breakInstance(sandbox.providerInstanceId!, 'its disk passed 64 MiB (diskMb)');
      await reconciler.runOnce();
      expect(await read(sandbox.id)).toMatchObject({ status: 'failed', failureReason: 'its disk passed 64 MiB (diskMb)' });
      expect(await actions(sandbox.id)).toEqual(['sandbox.failed']);
    });

    it('desired states set elsewhere are reached by the reconciler: stopped, ready, deleted', async () => {
      const sandbox = await sandboxWith();
      await store.repos.sandboxes.update(sandbox.id, { desiredStatus: 'stopped' });
      await reconciler.runOnce();
      expect((await read(sandbox.id)).status).toBe('stopped');
      await store.repos.sandboxes.update(sandbox.id, { desiredStatus: 'ready' });
      await reconciler.runOnce();
      expect((await read(sandbox.id)).status).toBe('running');
      await store.repos.sandboxes.update(sandbox.id, { desiredStatus: 'deleted' });
      await reconciler.runOnce();
      expect((await read(sandbox.id)).status).toBe('deleted');
      expect((await fake.inspect(sandbox.providerInstanceId!)).status).toBe('missing');
      expect(await actions(sandbox.id)).toEqual(['sandbox.deleted', 'sandbox.started', 'sandbox.stopped']);
    });

    it('an agent key stops only sandboxes it created, and reaches only its own sessions', async () => {
      const agentKey: Principal = { role: 'agent', keyId: 'key-agent-1' };
      const admins = await sandboxWith();
      expect(await caught(services.sandboxes.stop(admins.id, agentKey))).toMatchObject({ code: 'forbidden' });
      const agent = await store.repos.agents.insert({
        name: `agent-${counter++}`,
        displayName: null,
        description: null,
        sandboxPolicy: { mode: 'none', default: null, bindings: {} },
        capabilities: [],
      });
      const session = await store.repos.sessions.insert({
        agentId: agent.id,
        agentVersionId: agent.currentVersion.id,
        bindingName: null,
        createdByRole: 'agent',
        createdByKeyId: 'key-agent-2',
      });
      await store.repos.sessions.setPrimarySandbox(session.id, admins.id);
      // Another key's session is not there at all.
      expect(await caught(services.sandboxes.stopForSession(session.id, agentKey))).toMatchObject({ code: 'not_found' });
      const owner: Principal = { role: 'agent', keyId: 'key-agent-2' };
      expect((await services.sandboxes.stopForSession(session.id, owner)).status).toBe('stopped');
      expect((await services.sandboxes.startForSession(session.id, owner)).status).toBe('running');
      expect(await caught(services.sandboxes.startForSession('ses_missing', ADMIN))).toMatchObject({ code: 'not_found' });
    });

    it('a provider call that does not answer times out; the sandbox stays as it was and the next try succeeds', async () => {
      const sandbox = await sandboxWith();
      let wedged = true;
      const slow: SandboxProvider = {
        ...fake,
        stop: (instanceId) => (wedged ? new Promise(() => undefined) : fake.stop!(instanceId)),
      };
      const lifecycle = createSandboxLifecycle({
        store,
        providers: createProviderRegistry([slow]),
        log: silentLog(),
        clock,
        providerCallTimeoutMs: 50,
      });
      await store.repos.sandboxes.update(sandbox.id, { desiredStatus: 'stopped' });
      const error = await caught(lifecycle.step(sandbox.id));
      expect(error).toMatchObject({ code: 'timeout' });
      expect((await read(sandbox.id)).status).toBe('running');
      wedged = false;
      expect(await lifecycle.step(sandbox.id)).toBe('stepped');
      expect((await read(sandbox.id)).status).toBe('stopped');
    });

    it('a provider without stop and start refuses them, and the idle policy leaves its sandboxes running', async () => {
      // The same fake (its state is on disk), registered without the capability.
      const plain = createFakeProvider({ dataDir, capabilities: { stopStart: false } });
      const providers = createProviderRegistry([plain]);
      const lifecycle = createSandboxLifecycle({ store, providers, log: silentLog(), clock });
      const sandboxes = createSandboxesService({
        store,
        providers,
        lifecycle,
        loadEnvironment: () => Promise.reject(new Error('not used')),
        log: silentLog(),
        clock,
      });
      const sandbox = await sandboxWith({ idleAfterSeconds: 1, idleAction: 'stop' });
      expect(await caught(sandboxes.stop(sandbox.id, ADMIN))).toMatchObject({ code: 'capability_unsupported' });
      clock.advance(5_000);
      expect(await lifecycle.step(sandbox.id, { idlePolicy: true })).toBe('idle');
      expect(await read(sandbox.id)).toMatchObject({ desiredStatus: 'ready', status: 'running' });
    });
  });
}

function silentLog() {
  const noop = () => undefined;
  const log = { info: noop, warn: noop, error: noop, debug: noop, trace: noop, fatal: noop, level: 'silent', silent: noop };
  return { ...log, child: () => log } as unknown as Parameters<typeof createSandboxLifecycle>[0]['log'];
}
