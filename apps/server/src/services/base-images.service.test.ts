import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import type { Principal } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { testDatabases } from '@sandcast/db/testing';
import { type BaseImageInfo, type BaseImageStore, ProviderError, type SandboxProvider } from '@sandcast/provider-sdk';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { createBaseImagesService } from './base-images.service.ts';

const actor: Principal = { role: 'admin', keyId: null };

const info = (name: string, origin = 'import'): BaseImageInfo => ({
  id: `img-${name}`,
  name,
  origin,
  sizeBytes: 10,
  layers: 1,
  digest: null,
  parentId: null,
  createdAt: new Date(0).toISOString(),
});

/** A provider image store that records what it was asked: the service's collaborator, not under test. */
function recordingStore() {
  const images = [info('host', 'builtin')];
  const imported: Array<{ name: string; maxBytes: number | undefined; existed: boolean }> = [];
  let refuse: ProviderError | null = null;
  const store: BaseImageStore = {
    list: async () => images,
    importArchive: async ({ tarPath, name, maxBytes }) => {
      imported.push({ name, maxBytes, existed: existsSync(tarPath) });
      if (refuse) throw refuse;
      return info(name);
    },
    build: async (recipe) => info(recipe.name ?? 'debian-x', 'debootstrap'),
    export: async () => Readable.from([Buffer.from('tar')]),
    remove: async () => undefined,
  };
  const refuseWith = (error: ProviderError) => {
    refuse = error;
  };
  return { store, imported, refuseWith };
}

describe('base images service', () => {
  let store: Store;
  let dataDir: string;
  let images: ReturnType<typeof recordingStore>;
  let service: ReturnType<typeof createBaseImagesService>;

  beforeEach(async () => {
    store = await testDatabases()[0]!.open();
    dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-base-images-'));
    images = recordingStore();
    const providers: ProviderRegistry = {
      list: () => [],
      get: (id) =>
        id === 'local'
          ? { provider: { id: 'local', baseImages: images.store } as unknown as SandboxProvider, jsonSchema: {}, secretPaths: [] }
          : id === 'docker'
            ? { provider: { id: 'docker' } as unknown as SandboxProvider, jsonSchema: {}, secretPaths: [] }
            : undefined,
      close: async () => undefined,
    };
    service = createBaseImagesService({ store, providers, dataDir, maxImportBytes: 1024, log: pino({ level: 'silent' }) });
  });
  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const actions = async () => (await store.repos.activity.list({ limit: 50 })).map((a) => a.action);

  it('refuses before the upload: an unknown provider, one without images, a taken name, a declared size over the cap', async () => {
    await expect(service.checkImport({ provider: 'nope', name: 'x', declaredBytes: null })).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.checkImport({ provider: 'docker', name: 'x', declaredBytes: null })).rejects.toMatchObject({
      code: 'capability_unsupported',
    });
    await expect(service.checkImport({ provider: 'local', name: 'host', declaredBytes: null })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('the built-in base'),
    });
    await expect(service.checkImport({ provider: 'local', name: 'x', declaredBytes: 1025 })).rejects.toMatchObject({
      code: 'payload_too_large',
      message: expect.stringContaining('SANDCAST_IMAGE_IMPORT_MAX_BYTES'),
    });
    await service.checkImport({ provider: 'local', name: 'x', declaredBytes: 1024 });
  });

  it('stops an upload at the byte that crosses the cap and keeps nothing of it', async () => {
    const body = new PassThrough();
    const received = service.receive(body);
    body.write(Buffer.alloc(1000));
    body.write(Buffer.alloc(100));
    await expect(received).rejects.toMatchObject({ code: 'payload_too_large' });
    expect(await readdir(path.join(dataDir, 'tmp'))).toEqual([]);
  });

  it('imports with the cap, records the import, and removes the upload whatever happens', async () => {
    const archive = await service.receive(Readable.from([Buffer.alloc(512)]));
    expect(archive.bytes).toBe(512);
    const image = await service.importReceived({ provider: 'local', name: 'mini', archive, actor }, () => undefined);
    expect(image.name).toBe('mini');
    expect(images.imported).toEqual([{ name: 'mini', maxBytes: 1024, existed: true }]);
    expect(existsSync(archive.file)).toBe(false);

    images.refuseWith(new ProviderError({ provider: 'local', code: 'invalid_input', message: 'the archive: bad entry' }));
    const bad = await service.receive(Readable.from([Buffer.alloc(10)]));
    await expect(service.importReceived({ provider: 'local', name: 'bad', archive: bad, actor }, () => undefined)).rejects.toMatchObject({
      code: 'invalid_input',
    });
    expect(existsSync(bad.file)).toBe(false);
    expect(await actions()).toEqual(['base_image.imported']);
  });

  it('records builds, exports and removals', async () => {
    await service.build({ provider: 'local', recipe: { distro: 'debian', name: 'deb' }, actor }, () => undefined);
    await service.export({ provider: 'local', image: 'deb', actor });
    await service.remove({ provider: 'local', image: 'deb', actor });
    expect((await actions()).sort()).toEqual(['base_image.built', 'base_image.exported', 'base_image.removed']);
    const [removed] = await store.repos.activity.list({ limit: 1, action: 'base_image.removed' });
    expect(removed).toMatchObject({ subjectType: 'base_image', subjectId: 'deb', details: { provider: 'local' } });
  });
});
