import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckpointEngine } from './engine.ts';
import { checkpointBlobDir, createFsBlobStore } from './fs-blob-store.ts';
import { sha256 } from './manifest.ts';
import { createS3BlobStore } from './s3-blob-store.ts';
import { type FakeS3, startFakeS3 } from './test-support/fake-s3.ts';
import { describeTree } from './test-support/trees.ts';
import type { BlobStore } from './types.ts';

const credentials = { accessKeyId: 'AKIDSANDCASTTEST', secretAccessKey: 'test-secret-key' };

/** The one contract every blob store keeps. */
function blobStoreContract(name: string, open: () => BlobStore) {
  describe(`blob store contract: ${name}`, () => {
    it('stores, answers and returns blobs by digest', async () => {
      const store = open();
      const data = randomBytes(100_000);
      const digest = sha256(data);
      expect(await store.has(digest)).toBe(false);
      await store.put(digest, data);
      expect(await store.has(digest)).toBe(true);
      expect((await store.get(digest)).equals(data)).toBe(true);
      const empty = Buffer.alloc(0);
      await store.put(sha256(empty), empty, { durable: true });
      expect((await store.get(sha256(empty))).length).toBe(0);
    });

    it('a put of a digest it holds keeps the bytes; delete removes and tolerates missing blobs', async () => {
      const store = open();
      const blobs = [randomBytes(10), randomBytes(20), randomBytes(30)];
      for (const blob of blobs) await store.put(sha256(blob), blob);
      await store.put(sha256(blobs[0]!), blobs[0]!);
      await store.delete([sha256(blobs[0]!), sha256(blobs[1]!), sha256(randomBytes(5))]);
      expect(await store.has(sha256(blobs[0]!))).toBe(false);
      expect(await store.has(sha256(blobs[1]!))).toBe(false);
      expect((await store.get(sha256(blobs[2]!))).equals(blobs[2]!)).toBe(true);
    });

    it('a missing blob is not_found with what to do', async () => {
      await expect(open().get(sha256('nothing'))).rejects.toMatchObject({
        code: 'not_found',
        message: expect.stringMatching(/restore another/),
      });
    });

    it('refuses a name that is not a digest (no path reaches the store)', async () => {
      const store = open();
      for (const bad of ['../../etc/passwd', 'ab', `${'a'.repeat(63)}/`, 'A'.repeat(64)]) {
        await expect(store.put(bad, Buffer.from('x'))).rejects.toMatchObject({ code: 'internal' });
        await expect(store.get(bad)).rejects.toMatchObject({ code: 'internal' });
      }
    });

    it('deletes more blobs than one request carries', async () => {
      const store = open();
      const blobs = Array.from({ length: 1100 }, (_, i) => Buffer.from(`blob ${i}`));
      await Promise.all(blobs.map((blob) => store.put(sha256(blob), blob)));
      await store.delete(blobs.map((blob) => sha256(blob)));
      expect(await store.has(sha256(blobs[0]!))).toBe(false);
      expect(await store.has(sha256(blobs[1099]!))).toBe(false);
    });
  });
}

let dataDir: string;
let s3: FakeS3;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-blobs-'));
  s3 = await startFakeS3({ buckets: ['checkpoints'], credentials });
});
afterAll(async () => {
  await s3?.close();
  await rm(dataDir, { recursive: true, force: true });
});

blobStoreContract('fs', () => createFsBlobStore(checkpointBlobDir(dataDir)));
blobStoreContract('s3', () => createS3BlobStore({ url: `s3://checkpoints/team/blobs?endpoint=${s3.endpoint}`, credentials }));

describe('fs blob store', () => {
  it('keeps blobs at <dataDir>/checkpoints/blobs/<aa>/<digest> and leaves no temp files', async () => {
    const store = createFsBlobStore(checkpointBlobDir(dataDir));
    const data = Buffer.from('layout');
    await store.put(sha256(data), data, { durable: true });
    const shard = path.join(dataDir, 'checkpoints', 'blobs', sha256(data).slice(0, 2));
    expect(await readdir(shard)).toContain(sha256(data));
    expect((await readdir(shard)).some((name) => name.includes('.tmp-'))).toBe(false);
  });
});

describe('s3 blob store', () => {
  it('keys blobs under the prefix in the bucket, path-style', async () => {
    const store = createS3BlobStore({ endpoint: s3.endpoint, bucket: 'checkpoints', prefix: '/sandcast/', credentials });
    const data = Buffer.from('keyed');
    await store.put(sha256(data), data);
    expect(
      s3.buckets
        .get('checkpoints')
        ?.get(`sandcast/${sha256(data).slice(0, 2)}/${sha256(data)}`)
        ?.equals(data),
    ).toBe(true);
  });

  it('a wrong secret is refused by the server and reported as the store refusing', async () => {
    const store = createS3BlobStore({
      endpoint: s3.endpoint,
      bucket: 'checkpoints',
      credentials: { ...credentials, secretAccessKey: 'wrong' },
    });
    await expect(store.put(sha256('x'), Buffer.from('x'))).rejects.toMatchObject({
      code: 'provider_unavailable',
      message: expect.stringMatching(/credentials/),
    });
    expect(s3.buckets.get('checkpoints')?.has(`${sha256('x').slice(0, 2)}/${sha256('x')}`)).toBe(false);
  });

  it('carries a checkpoint: capture into the bucket, restore from it', async () => {
    const blobs = createS3BlobStore({ url: `s3://checkpoints/engine?endpoint=${s3.endpoint}`, credentials });
    const engine = createCheckpointEngine({ blobs });
    const source = path.join(dataDir, 's3-source');
    await mkdir(path.join(source, 'sub'), { recursive: true });
    await writeFile(path.join(source, 'sub/file'), randomBytes(5000));
    await symlink('sub/file', path.join(source, 'link'));
    const result = await engine.capture({ kind: 'host-dir', dir: source }, null);
    expect(result.newChunks).toHaveLength(1);
    const target = path.join(dataDir, 's3-target');
    await engine.restore(await engine.loadManifest(result.manifestDigest), result.manifestDigest, { kind: 'host-dir', dir: target });
    expect(await describeTree(target)).toEqual(await describeTree(source));
  });

  it('a URL that is not s3:// is refused with the expected form', () => {
    expect(() => createS3BlobStore({ url: 'http://bucket/prefix' })).toThrow(/s3:\/\/bucket\/prefix/);
  });
});
