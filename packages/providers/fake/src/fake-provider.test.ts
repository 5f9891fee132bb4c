import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeProviderConformance } from '@sandcast/provider-sdk/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createFakeProvider, type FakeProvider } from './fake-provider.ts';

const dirs: string[] = [];
const newDataDir = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'sandcast-fake-'));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describeProviderConformance({
  name: 'fake',
  createProvider: async () => createFakeProvider({ dataDir: await newDataDir() }),
  config: {},
  isolatedRoot: false,
  vanish: (provider, instanceId) => (provider as FakeProvider).vanish(instanceId),
});

describeProviderConformance({
  name: 'fake without capture',
  createProvider: async () =>
    createFakeProvider({
      dataDir: await newDataDir(),
      capabilities: { templateCapture: false, templateRefKind: null, pty: false, stopStart: false },
    }),
  config: {},
  isolatedRoot: false,
  vanish: (provider, instanceId) => (provider as FakeProvider).vanish(instanceId),
});

describe('fake provider failure injection', () => {
  it('fails create and capture on request', async () => {
    const provider = createFakeProvider({ dataDir: await newDataDir() });
    await expect(
      provider.create({ sandboxId: 's1', environmentId: 'e', config: { simulate: { failCreate: 'quota exceeded' } } }),
    ).rejects.toMatchObject({ code: 'backend', message: 'quota exceeded' });
    const lease = await provider.startInteractiveSetup({
      setupSessionId: 'x',
      environmentId: 'e',
      config: { simulate: { failCapture: 'disk full' } },
      source: null,
      ttlSeconds: 60,
    });
    await expect(provider.captureTemplate({ leaseId: lease.leaseId, setupSessionId: 'x', environmentId: 'e' })).rejects.toMatchObject({
      code: 'capture_failed',
    });
    await provider.cancelInteractiveSetup(lease.leaseId);
  });

  it('lists only what a setup changed: the empty workspace it started with is not a change', async () => {
    const provider = createFakeProvider({ dataDir: await newDataDir() });
    const lease = await provider.startInteractiveSetup({
      setupSessionId: 's',
      environmentId: 'e',
      config: {},
      source: null,
      ttlSeconds: 60,
    });
    expect(await provider.listChanges(lease.leaseId)).toEqual([]);
    await provider.exec(lease.leaseId, { command: ['sh', '-c', 'echo x > new.txt'] });
    expect(await provider.listChanges(lease.leaseId)).toEqual([{ path: '/workspace/new.txt', kind: 'added', sizeBytes: 2, type: 'file' }]);
    await provider.cancelInteractiveSetup(lease.leaseId);
  });

  it('refuses paths that escape the sandbox root', async () => {
    const provider = createFakeProvider({ dataDir: await newDataDir() });
    const { instanceId } = await provider.create({ sandboxId: 's2', environmentId: 'e', config: {} });
    await expect(provider.readFile(instanceId, '/../../etc/passwd')).rejects.toMatchObject({ code: 'not_found' });
    await provider.destroy(instanceId);
  });
});
