import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Principal } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider } from '@sandcast/provider-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProviderRegistry } from '../providers/provider-registry.ts';
import { bootSourceFor, fingerprintOf } from './boot-source.ts';
import { createEnvironmentsService, type EnvironmentsService } from './environments.service.ts';
import { createSecretBox } from './secrets.ts';

const ADMIN: Principal = { role: 'admin', keyId: null };

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`environment edits and the active image, one transaction [${database.kind}]`, () => {
    let store: Store;
    let dataDir: string;
    let environments: EnvironmentsService;
    let failRelink = false;
    const providers = () => createProviderRegistry([createFakeProvider({ dataDir })]);

    beforeAll(async () => {
      store = await database.open();
      dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-env-service-'));
      const injecting: Store = {
        ...store,
        transaction: (fn) =>
          store.transaction((repos) =>
            fn({
              ...repos,
              templates: {
                ...repos.templates,
                relink: async (...args: Parameters<typeof repos.templates.relink>) => {
                  if (failRelink) throw new Error('relink failed');
                  return repos.templates.relink(...args);
                },
              },
            }),
          ),
      };
      environments = createEnvironmentsService({
        store: injecting,
        providers: providers(),
        secrets: createSecretBox(Buffer.alloc(32, 3)),
        policy: async () => ({ mode: 'local_trusted' as const, allowHostNetwork: false }),
      });
    });

    afterAll(async () => {
      await store?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    /** An environment whose active image was captured from its first revision. */
    const withActiveImage = async (name: string) => {
      const env = await environments.create({ name, provider: 'fake', config: { image: 'base-a' } }, ADMIN);
      const registered = providers().get('fake')!;
      const bootSource = bootSourceFor(registered, 'fake', { image: 'base-a' });
      const image = await store.repos.templates.insert({
        environmentId: env.id,
        provider: 'fake',
        kind: 'snapshot',
        providerRef: 'fake-template:x',
        digest: null,
        sizeBytes: null,
        status: 'active',
        refreshedFromTemplateId: null,
        setupSessionId: null,
        revisionId: env.currentRevision.id,
        fingerprint: fingerprintOf(bootSource),
        bootSource,
        metadata: {},
        failureReason: null,
      });
      return { env, image };
    };

    it('a knob-only edit relinks the image to the new revision in the same call', async () => {
      const { env, image } = await withActiveImage('knob');
      const result = await environments.update(env.id, { config: { image: 'base-a', cpu: 2 } }, ADMIN);
      expect(result.customImageReconciliation).toEqual({ action: 'relinked', templateId: image.id });
      expect((await store.repos.templates.get(image.id))?.linkedRevisionId).toBe(result.environment.currentRevision.id);
    });

    it('a boot-source edit detaches the image and says which paths moved', async () => {
      const { env, image } = await withActiveImage('moved');
      const result = await environments.update(env.id, { config: { image: 'base-b' } }, ADMIN);
      expect(result.customImageReconciliation).toEqual({ action: 'detached', templateId: image.id, driftedPaths: ['config.image'] });
    });

    it('when reconciling the image fails, the edit itself is rolled back', async () => {
      const { env, image } = await withActiveImage('atomic');
      failRelink = true;
      try {
        await expect(environments.update(env.id, { config: { image: 'base-a', cpu: 4 } }, ADMIN)).rejects.toThrow('relink failed');
      } finally {
        failRelink = false;
      }
      const after = await store.repos.environments.get(env.id);
      expect(after?.currentRevision.id).toBe(env.currentRevision.id);
      expect(after?.config).toEqual(env.config);
      expect((await store.repos.templates.get(image.id))?.linkedRevisionId).toBe(env.currentRevision.id);
      const updates = (await store.repos.activity.list({ limit: 50, action: 'environment.updated' })).filter((a) => a.subjectId === env.id);
      expect(updates).toEqual([]);
    });
  });
}
