import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import { createLocalProvider } from '@sandcast/provider-local';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './support/harness.ts';
import {
  localSkipReason,
  REAL_PROVIDER_DATABASE,
  requireForSuite,
  runCustomImageLifecycle,
  useRealProviderServer,
} from './support/lifecycle.ts';

const exec = promisify(execFile);

const runnable = requireForSuite('custom-images-local', await localSkipReason());

describe.skipIf(!runnable)(`custom images on the local provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server, advanceClock } = useRealProviderServer((dataDir) => [createLocalProvider({ dataDir })]);
  let t: TestServer;
  beforeAll(() => {
    t = server();
  });

  it('captures by rename; boots, refreshes, rolls back, disables; cancel and expiry change nothing', async () => {
    const env = await t.client.environments.create({ name: 'local-lifecycle', provider: 'local', config: {} });
    const { v1, v2 } = await runCustomImageLifecycle({ client: t.client, environmentId: env.id, advanceClock });
    expect(v1.kind).toBe('image');
    expect(v2.refreshedFromTemplateId).toBe(v1.id);
    await t.server.reconciler.runOnce();
    const leftovers = await t.server.providers.get('local')!.provider.listInstances();
    expect(leftovers).toEqual([]);
  });

  it('lists the built-in base image, and refuses an import that is not an archive', async () => {
    const images = await t.client.baseImages.list('local');
    expect(images.map((i) => i.name)).toContain('host');
    const error = await t.client.baseImages
      .import('local', 'garbage', new TextEncoder().encode('not a tar archive at all'))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: expect.any(String) });
    expect((await t.client.baseImages.list('local')).map((i) => i.name)).not.toContain('garbage');
  });

  it('imports a docker save archive, boots an environment from it, and exports an archive docker load accepts', async (ctx) => {
    const dockerSkip = await dockerSkipReason();
    if (dockerSkip) {
      if (process.env.CI === 'true') throw new Error(`CI=true but Docker is needed here: ${dockerSkip}`);
      ctx.skip();
    }
    const dir = await mkdtemp(path.join(tmpdir(), 'sandcast-import-'));
    try {
      const saved = path.join(dir, 'debian.tar');
      await exec('docker', ['save', '-o', saved, TEST_IMAGE], { maxBuffer: 1024 * 1024 });
      const phases: string[] = [];
      const { openAsBlob } = await import('node:fs');
      const blob = await openAsBlob(saved);
      const image = await t.client.baseImages.import('local', 'debian-imported', blob.stream(), (p) => phases.push(p.phase));
      expect(image).toMatchObject({ name: 'debian-imported', origin: 'import', layers: 1 });
      expect(phases.length).toBeGreaterThan(0);

      const env = await t.client.environments.create({ name: 'local-debian', provider: 'local', config: { image: 'debian-imported' } });
      const sandbox = await t.client.sandboxes.create({ environmentId: env.id });
      const release = await t.client.sandboxes.exec(sandbox.id, { command: ['cat', '/etc/debian_version'] });
      expect(release.stdout).toMatch(/^\d+/);
      await t.client.sandboxes.delete(sandbox.id);

      const archive = await t.client.baseImages.export('local', 'debian-imported');
      const exported = path.join(dir, 'exported.tar');
      await writeFile(exported, Buffer.from(await new Response(archive).arrayBuffer()));
      const loaded = await exec('docker', ['load', '-i', exported]);
      const tag = /Loaded image: (\S+)/.exec(loaded.stdout)?.[1] ?? /Loaded image ID: (\S+)/.exec(loaded.stdout)?.[1];
      expect(tag, loaded.stdout).toBeTruthy();
      try {
        const ran = await exec('docker', ['run', '--rm', '--network', 'none', tag!, 'cat', '/etc/debian_version']);
        expect(ran.stdout).toBe(release.stdout);
      } finally {
        await exec('docker', ['rmi', '-f', tag!]).catch(() => undefined);
      }
      await t.client.environments.delete(env.id);
      await t.client.baseImages.remove('local', 'debian-imported');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
