import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Principal, SandcastError } from '@sandcast/core';
import type { NewTemplate, Store } from '@sandcast/db';
import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider, type FakeProvider } from '@sandcast/provider-fake';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMovableClock } from '../../clock.ts';
import { toErrorResponse } from '../../http/error-handler.ts';
import { createProviderRegistry } from '../../providers/provider-registry.ts';
import { createEnvironmentContextLoader } from '../environment-context.ts';
import { createEnvironmentsService } from '../environments.service.ts';
import { createSecretBox } from '../secrets.ts';
import { type SetupEndReason, SetupEvents } from './setup-events.ts';
import { createSetupSessionsService, type SetupSessionsService } from './setup-sessions.service.ts';

const ADMIN: Principal = { role: 'admin', keyId: null };

/** What a service call threw, mapped the way the HTTP layer maps it. */
const refusal = async (call: Promise<unknown>) => {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'expected a refusal').toBeInstanceOf(SandcastError);
  return { error: error as SandcastError, status: toErrorResponse(error).status };
};

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`setup sessions service on the fake provider [${database.kind}]`, () => {
    let store: Store;
    let dataDir: string;
    let service: SetupSessionsService;
    let fake: FakeProvider;
    let createEnvironment: (config?: Record<string, unknown>) => Promise<string>;
    const clock = createMovableClock();
    const events = new SetupEvents();
    const ended: Array<[string, SetupEndReason]> = [];
    /** When set, inserting the promoted image fails inside the promotion transaction. */
    let failPromotion: string | null = null;
    /** When set, a capture announces that it began and waits for the test to let it go on. */
    let captureGate: { began: () => void; proceed: Promise<void> } | null = null;

    beforeAll(async () => {
      const real = await database.open();
      store = real;
      // The service sees the real store, except that promotion can be made to fail on demand.
      const injecting: Store = {
        ...real,
        transaction: (fn) =>
          real.transaction((repos) =>
            fn({
              ...repos,
              templates: {
                ...repos.templates,
                insert: async (input: NewTemplate) => {
                  if (failPromotion && input.status === 'active') throw new Error(failPromotion);
                  return repos.templates.insert(input);
                },
              },
            }),
          ),
      };
      dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-setup-service-'));
      fake = createFakeProvider({ dataDir });
      const providers = createProviderRegistry([
        {
          ...fake,
          captureTemplate: async (request) => {
            if (captureGate) {
              captureGate.began();
              await captureGate.proceed;
            }
            return fake.captureTemplate(request);
          },
        },
      ]);
      const environments = createEnvironmentsService({
        store: real,
        providers,
        secrets: createSecretBox(Buffer.alloc(32, 7)),
        policy: async () => ({ mode: 'local_trusted' as const, allowHostNetwork: false }),
      });
      const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
      service = createSetupSessionsService({
        store: injecting,
        providers,
        loadEnvironment: createEnvironmentContextLoader({
          environments,
          providers,
          policy: async () => ({ mode: 'local_trusted' as const, allowHostNetwork: false }),
        }),
        events,
        log,
        clock,
      });
      events.onEnded((id, reason) => ended.push([id, reason]));
      let n = 0;
      createEnvironment = async (config = {}) =>
        (await environments.create({ name: `service-${database.kind}-${++n}`, provider: 'fake', config }, ADMIN)).id;
    });

    afterAll(async () => {
      await store?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    beforeEach(() => {
      failPromotion = null;
      captureGate = null;
      ended.length = 0;
      clock.reset();
    });

    const actions = async (sessionId: string) =>
      (await store.repos.activity.list({ limit: 100 })).filter((a) => a.subjectId === sessionId).map((a) => a.action);

    it('start: a running session with a PTY connection, recorded as activity', async () => {
      const environmentId = await createEnvironment();
      const { session, connectionPayload } = await service.start(environmentId, { ttlSeconds: 600 }, ADMIN);
      expect(session).toMatchObject({ status: 'waiting_for_user', environmentId, sourceTemplateId: null });
      expect(session.providerLeaseId).toBeTruthy();
      expect(connectionPayload).toEqual({ type: 'pty', expiresAt: session.expiresAt });
      expect(service.connectionPayload(session)).toEqual(connectionPayload);
      expect(await actions(session.id)).toEqual(['environment.custom_image_setup.started']);
      await service.cancel(session.id, {}, ADMIN);
    });

    it('exec and changes: commands run in the setup sandbox and what they wrote is listed', async () => {
      const environmentId = await createEnvironment();
      const { session } = await service.start(environmentId, { ttlSeconds: 600 }, ADMIN);
      const result = await service.exec(session.id, { command: ['sh', '-c', 'echo ready; echo token > note.txt'] });
      expect(result).toMatchObject({ exitCode: 0, stdout: 'ready\n', timedOut: false });
      const changes = await service.changes(session.id);
      expect(changes.changes.map((c) => c.path)).toContain('/workspace/note.txt');
      expect(changes.truncated).toBe(false);
      await service.cancel(session.id, {}, ADMIN);
      const { error, status } = await refusal(service.exec(session.id, { command: ['true'] }));
      expect([error.code, status]).toEqual(['conflict', 409]);
    });

    it('finish: the capture becomes the active image, the session is promoted and its terminals are told', async () => {
      const environmentId = await createEnvironment();
      const { session } = await service.start(environmentId, { ttlSeconds: 600 }, ADMIN);
      const result = await service.finish(session.id, { metadata: { note: 'first' } }, ADMIN);
      expect(result.session.status).toBe('promoted');
      expect(result.template).toMatchObject({ status: 'active', setupSessionId: session.id, metadata: { note: 'first' } });
      expect((await store.repos.templates.active(environmentId))?.id).toBe(result.template.id);
      expect(service.progressOf(session.id)).toBeNull();
      expect(ended).toEqual([[session.id, 'setup_finished']]);
      expect(await actions(session.id)).toEqual(['environment.custom_image_setup.finished', 'environment.custom_image_setup.started']);
    });

    it('cancel: the session ends, the sandbox goes, the active image is untouched', async () => {
      const environmentId = await createEnvironment();
      const { session } = await service.start(environmentId, { ttlSeconds: 600 }, ADMIN);
      const cancelled = await service.cancel(session.id, { reason: 'wrong base' }, ADMIN);
      expect(cancelled).toMatchObject({ status: 'cancelled' });
      expect(cancelled.finishedAt).not.toBeNull();
      expect(ended).toEqual([[session.id, 'setup_cancelled']]);
      expect(await store.repos.templates.active(environmentId)).toBeNull();
      expect(service.connectionPayload(cancelled)).toBeNull();
    });

    it('expiry: a session read after its expiry is timed out, and the sweep finds the rest', async () => {
      const environmentId = await createEnvironment();
      const first = (await service.start(environmentId, { ttlSeconds: 60 }, ADMIN)).session;
      clock.advance(61_000);
      expect((await service.requireSession(first.id)).status).toBe('timed_out');
      expect(ended).toEqual([[first.id, 'expired']]);
      expect(await actions(first.id)).toContain('environment.custom_image_setup.expired');

      clock.reset();
      const second = (await service.start(environmentId, { ttlSeconds: 60 }, ADMIN)).session;
      clock.advance(61_000);
      expect(await service.sweepExpired()).toBeGreaterThanOrEqual(1);
      expect((await store.repos.setupSessions.get(second.id))?.status).toBe('timed_out');
      const { error, status } = await refusal(service.finish(second.id, {}, ADMIN));
      expect([error.code, status]).toEqual(['invalid_transition', 409]);
      expect(error.details).toMatchObject({ from: 'timed_out', to: 'capturing' });
    });

    it('a failed capture fails the session, records a failed image and the activity, and keeps the active image', async () => {
      const environmentId = await createEnvironment();
      const active = (await service.finish((await service.start(environmentId, { ttlSeconds: 600 }, ADMIN)).session.id, {}, ADMIN))
        .template;
      await store.repos.environments.update(environmentId, {
        config: { image: 'fake-base', simulate: { failCapture: 'disk full' } },
        expectedRevisionId: (await store.repos.environments.get(environmentId))!.currentRevision.id,
      });
      const { session } = await service.start(environmentId, { templateId: active.id, ttlSeconds: 600 }, ADMIN);
      ended.length = 0;
      await expect(service.finish(session.id, {}, ADMIN)).rejects.toThrow(/disk full/);
      expect(await store.repos.setupSessions.get(session.id)).toMatchObject({
        status: 'failed',
        failureReason: 'capture failed: disk full',
      });
      expect((await store.repos.templates.active(environmentId))?.id).toBe(active.id);
      expect((await store.repos.templates.list(environmentId)).map((t) => t.status)).toEqual(['failed', 'active']);
      const failed = (await store.repos.activity.list({ limit: 100, action: 'environment.custom_image_setup.failed' })).find(
        (a) => a.subjectId === session.id,
      );
      expect(failed?.details).toMatchObject({ stage: 'capture', failureReason: 'capture failed: disk full' });
      expect(ended).toEqual([[session.id, 'setup_finished']]);
    });

    it('a failed promotion fails the session with its activity in one transaction and keeps the active image', async () => {
      const environmentId = await createEnvironment();
      const active = (await service.finish((await service.start(environmentId, { ttlSeconds: 600 }, ADMIN)).session.id, {}, ADMIN))
        .template;
      const { session } = await service.start(environmentId, { ttlSeconds: 600 }, ADMIN);
      ended.length = 0;
      failPromotion = 'the images table is full';
      await expect(service.finish(session.id, {}, ADMIN)).rejects.toThrow('the images table is full');
      expect(await store.repos.setupSessions.get(session.id)).toMatchObject({
        status: 'failed',
        failureReason: 'the captured image could not be promoted: the images table is full',
      });
      // The promotion's own writes rolled back: the previous image is still the active one.
      expect((await store.repos.templates.active(environmentId))?.id).toBe(active.id);
      expect((await store.repos.templates.list(environmentId)).map((t) => t.id)).toEqual([active.id]);
      const failed = (await store.repos.activity.list({ limit: 100, action: 'environment.custom_image_setup.failed' })).find(
        (a) => a.subjectId === session.id,
      );
      expect(failed?.details).toMatchObject({ stage: 'promotion', environmentId });
      expect(failed?.details.providerRef).toEqual(expect.any(String));
      expect(await actions(session.id)).not.toContain('environment.custom_image_setup.finished');
      expect(service.progressOf(session.id)).toBeNull();
      expect(ended).toEqual([[session.id, 'setup_finished']]);
    });

    it('illegal transitions are typed 409s: cancelling a capture, cancelling or finishing an ended session', async () => {
      const environmentId = await createEnvironment();
      const { session } = await service.start(environmentId, { ttlSeconds: 600 }, ADMIN);
      let began!: () => void;
      let proceed!: () => void;
      const captureBegan = new Promise<void>((resolve) => {
        began = resolve;
      });
      captureGate = { began, proceed: new Promise<void>((resolve) => (proceed = resolve)) };
      const finishing = service.finish(session.id, {}, ADMIN);
      await captureBegan;
      const duringCapture = await refusal(service.cancel(session.id, {}, ADMIN));
      expect([duringCapture.error.code, duringCapture.status]).toEqual(['invalid_transition', 409]);
      expect(duringCapture.error.message).toMatch(/a capture cannot be interrupted/);
      expect(duringCapture.error.details).toMatchObject({ machine: 'setup session', from: 'capturing', to: 'cancelled' });
      const secondFinish = await refusal(service.finish(session.id, {}, ADMIN));
      expect([secondFinish.error.code, secondFinish.status]).toEqual(['invalid_transition', 409]);
      expect((await store.repos.setupSessions.get(session.id))?.status).toBe('capturing');
      proceed();
      expect((await finishing).session.status).toBe('promoted');

      const other = await createEnvironment();
      const ended2 = (await service.start(other, { ttlSeconds: 600 }, ADMIN)).session;
      await service.cancel(ended2.id, {}, ADMIN);
      const again = await refusal(service.cancel(ended2.id, {}, ADMIN));
      expect([again.error.code, again.status]).toEqual(['invalid_transition', 409]);
      expect(again.error.details).toMatchObject({ from: 'cancelled', to: 'cancelled' });
    });

    it('recovery after a restart fails what a crash interrupted, keeps a live setup, and records why', async () => {
      const interrupted = async (status: 'starting' | 'capturing') => {
        const environmentId = await createEnvironment();
        const env = (await store.repos.environments.get(environmentId))!;
        const session = await store.repos.setupSessions.insert({
          environmentId,
          environmentRevisionId: env.currentRevision.id,
          provider: 'fake',
          sourceTemplateId: null,
          expiresAt: new Date(Date.now() + 600_000),
          createdByKeyId: null,
        });
        if (status === 'capturing') {
          await store.repos.setupSessions.transition(session.id, 'waiting_for_user', { providerLeaseId: 'lease-gone' });
          await store.repos.setupSessions.transition(session.id, 'capturing');
        }
        return session.id;
      };
      const starting = await interrupted('starting');
      const capturing = await interrupted('capturing');
      const live = (await service.start(await createEnvironment(), { ttlSeconds: 600 }, ADMIN)).session;
      const lost = (await service.start(await createEnvironment(), { ttlSeconds: 600 }, ADMIN)).session;
      // Its sandbox goes behind the provider's back, as it would while the server was down.
      await fake.vanish(lost.providerLeaseId!);

      await service.recoverAfterRestart();
      expect(await store.repos.setupSessions.get(starting)).toMatchObject({
        status: 'failed',
        failureReason: 'the server stopped while the setup sandbox was starting',
      });
      expect((await store.repos.setupSessions.get(capturing))?.failureReason).toMatch(/the server stopped during the capture/);
      expect((await store.repos.setupSessions.get(live.id))?.status).toBe('waiting_for_user');
      expect(await store.repos.setupSessions.get(lost.id)).toMatchObject({
        status: 'failed',
        failureReason: 'the setup sandbox was lost while the server was down',
      });
      expect(await actions(starting)).toEqual(['environment.custom_image_setup.failed']);
      await service.cancel(live.id, {}, ADMIN);
    });
  });
}
