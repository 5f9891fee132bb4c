import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { SandcastApiError } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

const apiError = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the API to refuse');
    },
    (e: unknown) => e as SandcastApiError,
  );

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`foundation API [${database.kind}]`, () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer({ database });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('answers health with version, database and mode', async () => {
      expect(await t.client.health()).toEqual({
        ok: true,
        version: expect.stringMatching(/^\d+\.\d+\.\d+/),
        database: database.kind,
        deploymentMode: 'local_trusted',
      });
    });

    it('serves default settings and merges a PATCH', async () => {
      expect(await t.client.settings.get()).toEqual({
        experimental: { enableEnvironments: false, enableSandboxDuplexBridge: false },
        security: { allowHostNetwork: false, allowPublicPorts: false },
        egress: { allowPrivateHosts: [] },
        sessions: { inlineProviders: [], inlineConfigFields: ['cpu', 'memoryMb'], checkpointRetention: 20 },
        fleet: { maxSandboxesPerSession: 5, maxCpusPerSession: 8, maxMemoryMbPerSession: 16384 },
      });
      await t.client.settings.update({ experimental: { enableSandboxDuplexBridge: true } });
      await t.client.settings.update({ experimental: { enableSandboxDuplexBridge: false } });
      expect((await t.client.settings.get()).experimental.enableSandboxDuplexBridge).toBe(false);
    });

    it('takes egress exceptions as exact host:port pairs or CIDRs, and refuses anything else', async () => {
      const entries = ['10.0.0.5:443', '[fd00::5]:443', 'mirror.internal:8080', '10.20.0.0/16', 'fd00::/8'];
      expect((await t.client.settings.update({ egress: { allowPrivateHosts: entries } })).egress.allowPrivateHosts).toEqual(entries);
      for (const bad of ['10.0.0.5', 'mirror.internal', '10.0.0.0/33', '10.0.0.5:0', 'a b:80', '10.0.0.5:70000']) {
        const res = await t.fetch('/api/instance/settings', {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ egress: { allowPrivateHosts: [bad] } }),
        });
        expect(res.status, bad).toBe(400);
        expect(res.text).toContain('host:port');
      }
      await t.client.settings.update({ egress: { allowPrivateHosts: [] } });
    });

    it('refuses every environment route while environments are off, saying how to turn them on', async () => {
      for (const [method, p] of [
        ['GET', '/api/environments'],
        ['POST', '/api/environments'],
        ['GET', '/api/environments/env_x'],
        ['PATCH', '/api/environments/env_x'],
        ['DELETE', '/api/environments/env_x'],
        ['GET', '/api/environments/env_x/revisions'],
      ] as const) {
        const res = await t.fetch(p, {
          method,
          headers: { 'content-type': 'application/json' },
          body: method === 'POST' || method === 'PATCH' ? '{}' : undefined,
        });
        expect(res.status, `${method} ${p}`).toBe(403);
        expect(res.body).toMatchObject({ error: { code: 'feature_disabled', message: expect.stringContaining('enableEnvironments') } });
      }
    });

    describe('with environments on', () => {
      beforeAll(async () => {
        await enableEnvironments(t.client);
      });

      it('creates an environment with revision 1 and answers 201', async () => {
        const res = await t.fetch('/api/environments', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'created', provider: 'fake', config: { cpu: 1 } }),
        });
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({
          name: 'created',
          provider: 'fake',
          config: { cpu: 1, image: 'fake-base' },
          currentRevision: { number: 1 },
        });
      });

      it('refuses a duplicate name with 409', async () => {
        await t.client.environments.create({ name: 'dup', provider: 'fake', config: {} });
        const error = await apiError(t.client.environments.create({ name: 'dup', provider: 'fake', config: {} }));
        expect(error.status).toBe(409);
        expect(error.code).toBe('conflict');
      });

      it('validates config with the provider schema and names the fields', async () => {
        const error = await apiError(
          t.client.environments.create({ name: 'bad-config', provider: 'fake', config: { cpu: 'lots', bogus: 1 } }),
        );
        expect(error.status).toBe(400);
        expect(error.code).toBe('validation_failed');
        const paths = ((error.details?.issues ?? []) as Array<{ path: string }>).map((i) => i.path);
        expect(paths).toEqual(expect.arrayContaining(['config.cpu']));
        expect(JSON.stringify(error.details)).toContain('bogus');
        expect(await t.client.environments.list().then((l) => l.some((e) => e.name === 'bad-config'))).toBe(false);
      });

      it('refuses an unknown provider with the list of known ones', async () => {
        const error = await apiError(t.client.environments.create({ name: 'nope', provider: 'mainframe', config: {} }));
        expect(error.status).toBe(400);
        expect(error.message).toContain('fake');
      });

      it('inserts revision N+1 for config changes only, and keeps old revisions intact', async () => {
        const env = await t.client.environments.create({ name: 'revs', provider: 'fake', config: { cpu: 1 } });
        const renamed = await t.client.environments.update(env.id, { name: 'revs-renamed' });
        expect(renamed.currentRevision.number).toBe(1);
        const same = await t.client.environments.update(env.id, { config: { cpu: 1 } });
        expect(same.currentRevision.number).toBe(1);
        const changed = await t.client.environments.update(env.id, { config: { cpu: 2 } });
        expect(changed.currentRevision.number).toBe(2);
        const revisions = await t.client.environments.revisions(env.id);
        expect(revisions.map((r) => [r.number, r.config.cpu])).toEqual([
          [2, 2],
          [1, 1],
        ]);
      });

      it('answers 404 for an unknown environment and deletes a known one', async () => {
        expect((await apiError(t.client.environments.get('env_missing'))).status).toBe(404);
        const env = await t.client.environments.create({ name: 'to-delete', provider: 'fake', config: {} });
        await t.client.environments.delete(env.id);
        expect((await apiError(t.client.environments.get(env.id))).status).toBe(404);
        expect((await apiError(t.client.environments.delete(env.id))).status).toBe(404);
      });

      it('keeps secrets encrypted at rest, masked in answers, out of activity and logs', async () => {
        const secret = 'tok-very-secret-value-123';
        const env = await t.client.environments.create({ name: 'secretive', provider: 'fake', config: { apiToken: secret } });
        expect(env.config.apiToken).toEqual({ secret: true, set: true });
        expect(JSON.stringify(await t.client.environments.get(env.id))).not.toContain(secret);

        const stored = await t.server.store.repos.environments.get(env.id);
        expect(stored?.config.apiToken).toEqual({ $encrypted: expect.stringMatching(/^v1\./) });
        expect(JSON.stringify(await t.server.store.repos.environments.revisions(env.id))).not.toContain(secret);

        // Sending the placeholder back keeps the stored secret; the provider still gets it.
        const updated = await t.client.environments.update(env.id, { config: { ...env.config, cpu: 3 } });
        expect(updated.currentRevision.number).toBe(2);
        expect((await t.server.services.environments.getOpen(env.id)).config.apiToken).toBe(secret);

        const activity = await t.client.activity({ limit: 500 });
        expect(activity.map((a) => a.action)).toEqual(expect.arrayContaining(['environment.created', 'environment.updated']));
        expect(JSON.stringify(activity)).not.toContain(secret);
        expect(t.logs.join('\n')).not.toContain(secret);

        const keyFile = await stat(path.join(t.dataDir, 'secret.key'));
        expect(keyFile.mode & 0o777).toBe(0o600);
      });

      it('records every mutation as activity', async () => {
        const env = await t.client.environments.create({ name: 'audited', provider: 'fake', config: {} });
        await t.client.environments.update(env.id, { config: { cpu: 2 } });
        await t.client.environments.delete(env.id);
        const mine = (await t.client.activity({ limit: 500 })).filter((a) => a.subjectId === env.id).map((a) => a.action);
        expect(mine).toEqual(['environment.deleted', 'environment.updated', 'environment.created']);
      });
    });

    it('lists sandbox targets with capabilities and a JSON Schema that marks secrets', async () => {
      const targets = await t.client.targets();
      const fake = targets.find((x) => x.provider === 'fake');
      expect(fake).toMatchObject({ displayName: expect.any(String), available: true, capabilities: { interactiveSetup: true } });
      expect(((fake?.configSchema.properties ?? {}) as Record<string, { secret?: boolean }>).apiToken?.secret).toBe(true);
    });
  });
}
