import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerLayerTar, spoolWithDigest } from '../src/layer-tar.ts';

describe('layer digests', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sandcast-layer-tar-'));
    await writeFile(join(dir, 'file.txt'), 'content\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('digests a layer directory reproducibly', async () => {
    const first = await spoolWithDigest(dockerLayerTar(dir), null);
    const second = await spoolWithDigest(dockerLayerTar(dir), null);
    expect(first.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(second).toEqual(first);
  });

  // The restart test's hang: close() stops running digests by destroying their stream, and a
  // destroyed stream emits neither 'end' nor 'error', so the digest promise never settled and
  // close() waited for it forever.
  it('a digest whose stream is destroyed settles (rejects) instead of waiting forever', async () => {
    const stream = dockerLayerTar(dir);
    const digest = spoolWithDigest(stream, null);
    stream.destroy();
    await expect(digest).rejects.toThrow(/premature close/i);
  });

  it('the same for any source stopped before its end', async () => {
    const source = new Readable({ read() {} });
    source.push(Buffer.from('partial'));
    const digest = spoolWithDigest(source, null);
    source.destroy();
    await expect(digest).rejects.toThrow(/premature close/i);
  });
});
