import { isProviderError } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubernetesFactory } from './factory.ts';
import { type FakeKubernetes, fakeClusterSkipReason, startFakeKubernetes, TEST_IMAGE } from './testing/index.ts';

const skip = await fakeClusterSkipReason();
if (skip && process.env.CI === 'true') throw new Error(`CI=true but the Kubernetes factory tests cannot run: ${skip}`);
if (skip) console.warn(`[kubernetes factory] skipped: ${skip}`);

describe.skipIf(skip !== null)('kubernetes as a connected provider', () => {
  let fake: FakeKubernetes;
  const factory = createKubernetesFactory();
  beforeAll(async () => {
    fake = await startFakeKubernetes();
  });
  afterAll(async () => {
    const unhandled = [...fake.unhandled];
    await fake.close();
    expect(unhandled).toEqual([]);
  });

  it('connects per connection, tests the credentials, and runs sandboxes', async () => {
    const connection = { id: 'conn_k8s_1', config: { namespace: fake.namespace }, secrets: { kubeconfig: fake.kubeconfig } };
    expect(await factory.testConnection(connection)).toEqual({ ok: true });
    const wrong = await factory.testConnection({
      ...connection,
      secrets: { kubeconfig: fake.kubeconfig.replace(/token: \S+/, 'token: nope') },
    });
    expect(wrong).toMatchObject({ ok: false, reason: expect.stringContaining('refused') });
    const broken = await factory.testConnection({ ...connection, config: { namespace: 'Bad Name' } });
    expect(broken).toMatchObject({ ok: false, reason: expect.stringContaining('namespace') });

    const provider = factory.connect(connection, { dataDir: '/tmp/unused' });
    const { instanceId } = await provider.create({ sandboxId: 'sbx-f', environmentId: 'env-f', config: { image: TEST_IMAGE } });
    expect((await provider.exec(instanceId, { command: ['echo', 'from the connection'] })).stdout).toBe('from the connection\n');
    // Labelled with the connection, not with anything another connection shares.
    expect(await provider.listInstances()).toEqual([{ instanceId, ownerId: 'sbx-f', ownerKind: 'sandbox' }]);
    const other = factory.connect({ ...connection, id: 'conn_k8s_2' }, { dataDir: '/tmp/unused' });
    expect(await other.listInstances()).toEqual([]);

    // The factory declares capture; a connection without a registry refuses it before any setup.
    expect(factory.capabilities).toMatchObject({ interactiveSetup: true, templateCapture: true, templateRefKind: 'image' });
    const refused = await provider
      .startInteractiveSetup({ setupSessionId: 's', environmentId: 'env-f', config: { image: TEST_IMAGE }, source: null, ttlSeconds: 60 })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(isProviderError(refused) && refused.code).toBe('unsupported');
    expect((refused as Error).message).toMatch(/no registry/);
    await provider.destroy(instanceId);
  });
});
