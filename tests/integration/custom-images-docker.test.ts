import { createDockerProvider } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import Docker from 'dockerode';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite, runCustomImageLifecycle, useRealProviderServer } from './support/lifecycle.ts';

const runnable = requireForSuite('custom-images-docker', await dockerSkipReason());

describe.skipIf(!runnable)(`custom images on the Docker provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server, advanceClock } = useRealProviderServer((dataDir) => [createDockerProvider({ dataDir })]);
  let t: TestServer;
  beforeAll(() => {
    t = server();
  });

  it('captures with docker commit; boots, refreshes, rolls back, disables; cancel and expiry change nothing', async () => {
    const env = await t.client.environments.create({ name: 'docker-lifecycle', provider: 'docker', config: { image: TEST_IMAGE } });
    const { v1, v2 } = await runCustomImageLifecycle({ client: t.client, environmentId: env.id, advanceClock });
    expect(v1).toMatchObject({
      kind: 'image',
      providerRef: expect.stringMatching(/^sandcast\/.+:/),
      digest: expect.stringMatching(/^sha256:/),
    });
    expect(v2.sizeBytes).toBeGreaterThan(0);

    // Every setup and sandbox container is gone; the captured images remain for rollback.
    await t.server.reconciler.runOnce();
    const docker = new Docker();
    const leftovers = await docker.listContainers({ all: true, filters: { label: [`sandcast.environment=${env.id}`] } });
    expect(leftovers).toEqual([]);
    for (const ref of [v1.providerRef!, v2.providerRef!])
      await docker
        .getImage(ref)
        .remove({ force: true })
        .catch(() => undefined);
  });

  it("the reconciler removes a labelled container nothing owns; unlabelled and other installations' containers are left alone", async () => {
    const provider = t.server.providers.get('docker')!.provider;
    const orphan = await provider.create({
      sandboxId: 'sbx_not_in_the_database',
      environmentId: 'env_gone',
      config: { image: TEST_IMAGE, network: 'none' },
    });
    const docker = new Docker();
    const bystander = await docker.createContainer({
      Image: TEST_IMAGE,
      Cmd: ['sleep', '300'],
      HostConfig: { NetworkMode: 'none', AutoRemove: false },
    });
    try {
      const { removed } = await t.server.reconciler.runOnce();
      expect(removed).toBeGreaterThanOrEqual(1);
      expect((await provider.inspect(orphan.instanceId)).status).toBe('missing');
      expect((await bystander.inspect()).Id).toBe(bystander.id);
    } finally {
      await bystander.remove({ force: true });
    }
  });
});
