import { createDockerProvider, DOCKER_LABELS } from '@sandcast/provider-docker';
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

  it('a capture the server never recorded is removed by the next reconciler pass once its session is over; a recorded image never is', async () => {
    const env = await t.client.environments.create({
      name: 'docker-unrecorded-capture',
      provider: 'docker',
      config: { image: TEST_IMAGE },
    });
    const provider = t.server.providers.get('docker')!.provider;
    const docker = new Docker();
    const capturedFrom = async (sessionId: string) =>
      docker.listImages({ filters: { label: [`${DOCKER_LABELS.capturedFrom}=${sessionId}`] } });

    // A capture that completes through the API: its image is recorded and stays.
    const recorded = await t.client.customImages.startSetup(env.id);
    await t.client.customImages.exec(recorded.session.id, { command: ['sh', '-c', 'echo kept > /opt/kept.txt'] });
    const template = (await t.client.customImages.finish(recorded.session.id)).template;

    // The server dies mid-capture: the session is `capturing`, the engine committed, nothing recorded it.
    const { session } = await t.client.customImages.startSetup(env.id);
    await t.client.customImages.exec(session.id, { command: ['sh', '-c', 'echo lost > /opt/lost.txt'] });
    const row = (await t.server.store.repos.setupSessions.get(session.id))!;
    await t.server.store.repos.setupSessions.transition(session.id, 'capturing');
    const orphan = await provider.captureTemplate({ leaseId: row.providerLeaseId!, setupSessionId: session.id, environmentId: env.id });
    expect(await capturedFrom(session.id)).toHaveLength(1);

    // While the capture may still be running, the image is left alone.
    await t.server.reconciler.runOnce();
    expect(await capturedFrom(session.id)).toHaveLength(1);

    // The restarted server fails the interrupted session; the next pass removes the image it left.
    await t.server.services.setupSessions.recoverAfterRestart();
    expect((await t.client.customImages.getSetup(session.id)).session.status).toBe('failed');
    const { removed } = await t.server.reconciler.runOnce();
    expect(removed).toBeGreaterThanOrEqual(1);
    expect(await capturedFrom(session.id)).toEqual([]);
    await expect(docker.getImage(orphan.ref).inspect()).rejects.toMatchObject({ statusCode: 404 });

    // The recorded image survives every pass, and still boots.
    await t.server.reconciler.runOnce();
    expect((await docker.getImage(template.providerRef!).inspect()).Id).toBe(template.digest);
    const sandbox = await t.client.sandboxes.create({ environmentId: env.id });
    expect((await t.client.sandboxes.exec(sandbox.id, { command: ['cat', '/opt/kept.txt'] })).stdout).toBe('kept\n');
    await t.client.sandboxes.delete(sandbox.id);
    await docker
      .getImage(template.providerRef!)
      .remove({ force: true })
      .catch(() => undefined);
  });

  it('an image another installation captured, or one an operator tagged, is never collected', async () => {
    const provider = t.server.providers.get('docker')!.provider;
    const other = createDockerProvider({ dataDir: `${t.dataDir}-other-installation` });
    const docker = new Docker();
    const lease = await other.startInteractiveSetup({
      setupSessionId: 'setup_of_another_installation',
      environmentId: 'env_other',
      config: { image: TEST_IMAGE },
      source: null,
      ttlSeconds: 600,
    });
    const theirs = await other.captureTemplate({
      leaseId: lease.leaseId,
      setupSessionId: 'setup_of_another_installation',
      environmentId: 'env_other',
    });
    await other.cancelInteractiveSetup(lease.leaseId);
    const mine = await provider.startInteractiveSetup({
      setupSessionId: 'setup_not_in_the_database',
      environmentId: 'env_gone',
      config: { image: TEST_IMAGE },
      source: null,
      ttlSeconds: 600,
    });
    const tagged = await provider.captureTemplate({
      leaseId: mine.leaseId,
      setupSessionId: 'setup_not_in_the_database',
      environmentId: 'env_gone',
    });
    await provider.cancelInteractiveSetup(mine.leaseId);
    await docker.getImage(tagged.digest!).tag({ repo: 'operator/keep', tag: 'mine' });
    try {
      await t.server.reconciler.runOnce();
      expect((await docker.getImage(theirs.digest!).inspect()).Id).toBe(theirs.digest);
      expect((await docker.getImage('operator/keep:mine').inspect()).Id).toBe(tagged.digest);
    } finally {
      await other.close?.();
      for (const ref of [theirs.ref, tagged.ref, 'operator/keep:mine'])
        await docker
          .getImage(ref)
          .remove({ force: true })
          .catch(() => undefined);
    }
  });
});
