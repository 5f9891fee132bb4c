import type { SandcastApiError, SandcastClient } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider } from '@sandcast/provider-fake';
import { createMovableClock } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

const refused = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the API to refuse');
    },
    (e: unknown) => e as SandcastApiError,
  );

/** A clock the test can move forward, to walk past expiries. */
async function capture(client: SandcastClient, environmentId: string, script: string) {
  const { session } = await client.customImages.startSetup(environmentId);
  const ran = await client.customImages.exec(session.id, { command: ['sh', '-c', script] });
  expect(ran.exitCode).toBe(0);
  return (await client.customImages.finish(session.id)).template;
}

async function filesInNewSandbox(client: SandcastClient, environmentId: string) {
  const sandbox = await client.sandboxes.create({ environmentId });
  const ls = await client.sandboxes.exec(sandbox.id, { command: ['sh', '-c', 'ls *.txt 2>/dev/null | tr "\\n" " "'] });
  await client.sandboxes.delete(sandbox.id);
  return { imageId: sandbox.imageId, files: ls.stdout.trim() };
}

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`custom images on the fake provider [${database.kind}]`, () => {
    let t: TestServer;
    const clock = createMovableClock();

    beforeAll(async () => {
      t = await startTestServer({
        database,
        clock,
        providers: (dataDir) => [
          createFakeProvider({ dataDir }),
          createFakeProvider({
            dataDir,
            id: 'fake-nosetup',
            displayName: 'No setup',
            capabilities: { interactiveSetup: false, templateCapture: false, templateRefKind: null },
          }),
          createFakeProvider({
            dataDir,
            id: 'fake-nocapture',
            displayName: 'No capture',
            capabilities: { templateCapture: false, templateRefKind: null },
          }),
        ],
      });
      await enableEnvironments(t.client);
    });
    afterAll(async () => {
      await t?.close();
    });

    it('walks the whole lifecycle: capture, boot, refresh, rollback, disable; cancel and expiry change nothing', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'lifecycle', provider: 'fake', config: {} });

      const empty = await client.customImages.overview(env.id);
      expect(empty).toMatchObject({
        activeTemplate: null,
        activeTemplateMatchesConfig: null,
        activeSession: null,
        capability: { state: 'template_setup', label: 'Template setup' },
      });

      // Configure image → Setup running → scripted setup → capture review → Finished.
      const started = await client.customImages.startSetup(env.id);
      expect(started.session).toMatchObject({ status: 'waiting_for_user', statusLabel: 'Setup running', sourceTemplateId: null });
      expect(started.connectionPayload).toEqual({ type: 'pty', expiresAt: started.session.expiresAt });
      expect(new Date(started.session.expiresAt).getTime() - Date.now()).toBeGreaterThan(3500 * 1000);
      await client.customImages.exec(started.session.id, {
        command: ['sh', '-c', 'echo one > one.txt && mkdir -p .ssh && echo k > .ssh/id_rsa'],
      });
      const changes = await client.customImages.changes(started.session.id);
      expect(changes.changes).toContainEqual({ path: '/workspace/one.txt', kind: 'added', sizeBytes: 4, type: 'file' });
      expect(changes.warnings).toEqual([{ path: '/workspace/.ssh/id_rsa', reason: 'SSH private key' }]);
      const finished = await client.customImages.finish(started.session.id);
      expect(finished.session).toMatchObject({ status: 'promoted', statusLabel: 'Template captured' });
      const v1 = finished.template;
      expect(v1).toMatchObject({
        status: 'active',
        kind: 'snapshot',
        setupSessionId: started.session.id,
        capturedRevisionId: env.currentRevision.id,
      });

      const afterCapture = await client.customImages.overview(env.id);
      expect(afterCapture).toMatchObject({
        activeTemplate: { id: v1.id },
        activeTemplateMatchesConfig: true,
        activeTemplateDrift: null,
        activeSession: null,
      });
      expect(afterCapture.latestSession?.status).toBe('promoted');

      // A sandbox created now boots from the capture and records the use.
      expect(await filesInNewSandbox(client, env.id)).toEqual({ imageId: v1.id, files: 'one.txt' });
      expect((await client.customImages.overview(env.id)).activeTemplate?.lastUsedAt).not.toBeNull();

      // Refresh: a new setup seeded from the active image; capture again.
      const refresh = await client.customImages.startSetup(env.id);
      expect(refresh.session.sourceTemplateId).toBe(v1.id);
      expect((await client.customImages.exec(refresh.session.id, { command: ['cat', 'one.txt'] })).stdout).toBe('one\n');
      await client.customImages.exec(refresh.session.id, { command: ['sh', '-c', 'echo two > two.txt'] });
      const v2 = (await client.customImages.finish(refresh.session.id)).template;
      expect(v2.refreshedFromTemplateId).toBe(v1.id);
      expect(await filesInNewSandbox(client, env.id)).toEqual({ imageId: v2.id, files: 'one.txt two.txt' });

      // Cancel changes nothing.
      const cancelled = await client.customImages.startSetup(env.id);
      await client.customImages.exec(cancelled.session.id, { command: ['sh', '-c', 'echo junk > junk.txt'] });
      expect((await client.customImages.cancel(cancelled.session.id, { reason: 'changed my mind' })).session).toMatchObject({
        status: 'cancelled',
        statusLabel: 'Setup cancelled',
      });
      expect(await filesInNewSandbox(client, env.id)).toEqual({ imageId: v2.id, files: 'one.txt two.txt' });

      // Expiry changes nothing, and an expired session can never be finished.
      const expiring = await client.customImages.startSetup(env.id, { ttlSeconds: 60 });
      await client.customImages.exec(expiring.session.id, { command: ['sh', '-c', 'echo late > late.txt'] });
      clock.advance(61_000);
      const late = await refused(client.customImages.finish(expiring.session.id));
      expect(late.status).toBe(409);
      expect(late.message).toContain('timed_out');
      expect((await client.customImages.getSetup(expiring.session.id)).session).toMatchObject({
        status: 'timed_out',
        statusLabel: 'Setup expired',
      });
      expect(await filesInNewSandbox(client, env.id)).toEqual({ imageId: v2.id, files: 'one.txt two.txt' });

      // Rollback: back to the first capture.
      const rolledBack = await client.customImages.rollback(env.id);
      expect(rolledBack.activeTemplate.id).toBe(v1.id);
      expect(rolledBack.supersededTemplate).toMatchObject({ id: v2.id, status: 'superseded' });
      expect(await filesInNewSandbox(client, env.id)).toEqual({ imageId: v1.id, files: 'one.txt' });

      // Disable: runs use the base config.
      const disabled = await client.customImages.disable(env.id);
      expect(disabled.template).toMatchObject({ id: v1.id, status: 'revoked' });
      expect(await filesInNewSandbox(client, env.id)).toEqual({ imageId: null, files: '' });

      const history = await client.customImages.history(env.id);
      expect(history.map((h) => [h.id, h.status])).toEqual([
        [v2.id, 'superseded'],
        [v1.id, 'revoked'],
      ]);
      const actions = (await client.activity({ limit: 500 })).map((a) => a.action);
      for (const action of [
        'environment.custom_image_setup.started',
        'environment.custom_image_setup.finished',
        'environment.custom_image_setup.cancelled',
        'environment.custom_image_setup.expired',
        'environment.custom_image_template.rolled_back',
        'environment.custom_image_template.disabled',
        'sandbox.created',
      ]) {
        expect(actions).toContain(action);
      }
    });

    it('refuses a second session, a foreign templateId, and acting on ended sessions', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'refusals', provider: 'fake', config: {} });
      const first = await client.customImages.startSetup(env.id);
      const second = await refused(client.customImages.startSetup(env.id));
      expect(second.status).toBe(409);
      expect(second.message).toContain(first.session.id);
      await client.customImages.cancel(first.session.id);

      expect((await refused(client.customImages.startSetup(env.id, { templateId: 'img_other' }))).status).toBe(422);
      const finishCancelled = await refused(client.customImages.finish(first.session.id));
      expect(finishCancelled.status).toBe(409);
      expect(finishCancelled.message).toContain('cancelled');
      // The core machine refuses cancelled → cancelled, typed so a client can switch on it.
      const cancelAgain = await refused(client.customImages.cancel(first.session.id));
      expect([cancelAgain.status, cancelAgain.code]).toEqual([409, 'invalid_transition']);
      expect(cancelAgain.details).toMatchObject({ machine: 'setup session', from: 'cancelled', to: 'cancelled' });
      expect((await refused(client.customImages.exec(first.session.id, { command: ['true'] }))).status).toBe(409);

      expect((await refused(client.customImages.rollback(env.id))).status).toBe(404);
      expect((await refused(client.customImages.disable(env.id))).status).toBe(404);
      expect((await refused(client.customImages.getSetup('setup_missing'))).status).toBe(404);
      expect((await refused(client.customImages.overview('env_missing'))).status).toBe(404);

      const badTtl = await refused(client.customImages.startSetup(env.id, { ttlSeconds: 5 }));
      expect(badTtl.code).toBe('validation_failed');
    });

    it('rollback needs an image the active one replaced', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'single', provider: 'fake', config: {} });
      await capture(client, env.id, 'echo a > a.txt');
      const error = await refused(client.customImages.rollback(env.id));
      expect(error.status).toBe(404);
      expect(error.message).toContain('nothing to roll back to');
    });

    it('answers capability refusals in the operator words', async () => {
      const { client } = t;
      const noSetup = await client.environments.create({ name: 'nosetup', provider: 'fake-nosetup', config: {} });
      expect((await client.customImages.overview(noSetup.id)).capability).toMatchObject({
        state: 'unsupported_provider',
        label: 'Unsupported provider',
      });
      const start = await refused(client.customImages.startSetup(noSetup.id));
      expect(start).toMatchObject({
        status: 422,
        code: 'capability_unsupported',
        message: 'This provider does not advertise interactive template setup.',
      });

      const noCapture = await client.environments.create({ name: 'nocapture', provider: 'fake-nocapture', config: {} });
      expect((await client.customImages.overview(noCapture.id)).capability).toMatchObject({
        state: 'capture_unavailable',
        label: 'Setup capture unavailable',
      });
      const { session } = await client.customImages.startSetup(noCapture.id);
      const finish = await refused(client.customImages.finish(session.id));
      expect(finish).toMatchObject({
        status: 422,
        code: 'capability_unsupported',
        message: 'This provider advertises setup, but image capture is unavailable.',
      });
      await client.customImages.cancel(session.id);
    });

    it('a failed capture fails the session with its reason and leaves the active image alone', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'failing', provider: 'fake', config: {} });
      const good = await capture(client, env.id, 'echo ok > ok.txt');
      await client.environments.update(env.id, { config: { simulate: { failCapture: 'disk quota exceeded' } } });
      await client.customImages.relink(env.id, { confirmBootSourceDrift: true });
      const { session } = await client.customImages.startSetup(env.id);
      const error = await refused(client.customImages.finish(session.id));
      expect(error).toMatchObject({ status: 502, code: 'provider_error' });
      const after = await client.customImages.getSetup(session.id);
      expect(after.session).toMatchObject({
        status: 'failed',
        statusLabel: 'Setup failed',
        failureReason: expect.stringContaining('disk quota exceeded'),
      });
      expect((await client.customImages.overview(env.id)).activeTemplate?.id).toBe(good.id);
      expect((await client.customImages.history(env.id)).map((h) => h.status)).toEqual(['failed', 'active']);
    });

    it('detaches on a boot-source change, relinks a knob-only change, and relinks with confirmation', async () => {
      const { client } = t;
      const env = await client.environments.create({
        name: 'drift',
        provider: 'fake',
        config: { image: 'base-a', cpu: 1, apiToken: 's1' },
      });
      const image = await capture(client, env.id, 'echo d > d.txt');

      const knob = await client.environments.update(env.id, { config: { image: 'base-a', cpu: 2, apiToken: 's2' } });
      expect(knob.customImageReconciliation).toEqual({ action: 'relinked', templateId: image.id });
      expect(await filesInNewSandbox(client, env.id)).toEqual({ imageId: image.id, files: 'd.txt' });

      const moved = await client.environments.update(env.id, { config: { image: 'base-b', cpu: 2 } });
      expect(moved.customImageReconciliation).toEqual({ action: 'detached', templateId: image.id, driftedPaths: ['config.image'] });
      const overview = await client.customImages.overview(env.id);
      expect(overview).toMatchObject({ activeTemplateMatchesConfig: false, activeTemplateDrift: { paths: ['config.image'] } });
      expect(await filesInNewSandbox(client, env.id)).toEqual({ imageId: null, files: '' });

      const unconfirmed = await refused(client.customImages.relink(env.id));
      expect(unconfirmed).toMatchObject({ status: 422, details: { classification: 'boot_source_drift', driftedPaths: ['config.image'] } });
      const relinked = await client.customImages.relink(env.id, { confirmBootSourceDrift: true });
      expect(relinked.classification).toBe('boot_source_drift');
      expect((await client.customImages.relink(env.id)).classification).toBe('in_sync');
      expect(await filesInNewSandbox(client, env.id)).toEqual({ imageId: image.id, files: 'd.txt' });
    });

    it('probes an environment the way a run would boot it', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'probed', provider: 'fake', config: {} });
      const base = await client.customImages.probe(env.id);
      expect(base).toMatchObject({ ok: true, imageId: null, diagnostics: { bootedFrom: 'base', exitCode: 0 } });
      const image = await capture(client, env.id, 'echo p > p.txt');
      const withImage = await client.customImages.probe(env.id);
      expect(withImage).toMatchObject({ ok: true, imageId: image.id, diagnostics: { bootedFrom: 'custom_image' } });
      expect((await client.sandboxes.list()).some((s) => s.environmentId === env.id)).toBe(false);
    });

    it('a sandbox whose compute vanished reads as lost and refuses commands', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'vanishing', provider: 'fake', config: {} });
      const sandbox = await client.sandboxes.create({ environmentId: env.id });
      const row = await t.server.store.repos.sandboxes.get(sandbox.id);
      const fake = t.server.providers.get('fake')!.provider as ReturnType<typeof createFakeProvider>;
      await fake.vanish(row!.providerInstanceId!);
      expect((await client.sandboxes.get(sandbox.id)).status).toBe('lost');
      expect((await refused(client.sandboxes.exec(sandbox.id, { command: ['true'] }))).status).toBe(409);
    });

    it("a sandbox its provider stopped reads as failed, with the provider's reason", async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'stopped-by-provider', provider: 'fake', config: {} });
      const sandbox = await client.sandboxes.create({ environmentId: env.id });
      const row = await t.server.store.repos.sandboxes.get(sandbox.id);
      const fake = t.server.providers.get('fake')!.provider as ReturnType<typeof createFakeProvider>;
      fake.breakInstance(row!.providerInstanceId!, 'its disk passed 64 MiB (diskMb)');
      expect(await client.sandboxes.get(sandbox.id)).toMatchObject({ status: 'failed', failureReason: 'its disk passed 64 MiB (diskMb)' });
      expect((await client.sandboxes.delete(sandbox.id)).status).toBe('deleted');
    });

    it('an agent key runs commands only in sandboxes it created, and nothing else here', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'agents', provider: 'fake', config: {} });
      const { key, secret } = await client.keys.create({ name: 'agent', role: 'agent' });
      const agent = t.clientWithKey(secret);
      const admins = await client.sandboxes.create({ environmentId: env.id });
      expect((await refused(agent.sandboxes.exec(admins.id, { command: ['true'] }))).status).toBe(403);
      const own = await t.server.services.sandboxes.create({ environmentId: env.id }, { role: 'agent', keyId: key.id });
      expect((await agent.sandboxes.exec(own.id, { command: ['sh', '-c', 'echo mine'] })).stdout).toBe('mine\n');
      for (const attempt of [
        () => agent.sandboxes.create({ environmentId: env.id }),
        () => agent.customImages.overview(env.id),
        () => agent.customImages.startSetup(env.id),
        () => agent.sandboxes.get(own.id),
      ]) {
        expect((await refused(attempt())).status).toBe(403);
      }
    });
  });
}
