import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import tar from 'tar-stream';
import type { ImageStore } from './image-store.ts';
import type { ImageRecord } from './image-types.ts';
import { dockerLayerTar, spoolWithDigest } from './layer-tar.ts';

function addEntry(pack: tar.Pack, name: string, body: Buffer | { file: string; size: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    if (Buffer.isBuffer(body)) {
      pack.entry({ name, size: body.length, mode: 0o644 }, body, (error) => (error ? reject(error) : resolve()));
      return;
    }
    const entry = pack.entry({ name, size: body.size, mode: 0o644 }, (error) => (error ? reject(error) : resolve()));
    createReadStream(body.file).on('error', reject).pipe(entry);
  });
}

/** A Docker repository tag derived from the image name. */
function dockerTagOf(name: string): string {
  const repo =
    name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+/, '') || 'image';
  return `sandcast-local/${repo}:latest`;
}

/**
 * An image as a `docker save` archive that `docker load` accepts: one `layer.tar` per layer
 * (the built-in base's host directories become a layer of their own, right above the skeleton),
 * a config with the image's env, workdir and user, and `manifest.json`. Layers are spooled to a
 * temp file one at a time to learn their size and digest before their entry is written.
 */
export function exportImageArchive(store: ImageStore, record: ImageRecord, tmpDir: string): Readable {
  const pack = tar.pack();
  const out = new PassThrough();
  pack.pipe(out);
  void (async () => {
    const sources: Array<{ cwd: string; what: string }> = [];
    record.layers.forEach((id, index) => {
      sources.push({ cwd: store.layerDir(id), what: '.' });
      if (index === 0) for (const dir of record.hostDirs) sources.push({ cwd: '/', what: dir.replace(/^\/+/, '') });
    });
    const diffIds: string[] = [];
    const layerPaths: string[] = [];
    for (const source of sources) {
      const file = join(tmpDir, `export-${process.pid}-${Date.now()}-${diffIds.length}.tar`);
      try {
        const { digest, size } = await spoolWithDigest(dockerLayerTar(source.cwd, source.what), file);
        const path = `${digest.slice('sha256:'.length)}/layer.tar`;
        await addEntry(pack, path, { file, size });
        diffIds.push(digest);
        layerPaths.push(path);
      } finally {
        await rm(file, { force: true });
      }
    }
    const created = record.createdAt;
    const config = Buffer.from(
      JSON.stringify({
        architecture: process.arch === 'x64' ? 'amd64' : process.arch,
        os: 'linux',
        created,
        config: {
          Env: Object.entries(record.config.env).map(([k, v]) => `${k}=${v}`),
          WorkingDir: record.config.workdir,
          User: record.config.user === 'root' ? '' : record.config.user,
          Cmd: ['/bin/sh'],
        },
        rootfs: { type: 'layers', diff_ids: diffIds },
        history: diffIds.map(() => ({ created, created_by: `sandcast local image ${record.id}` })),
      }),
    );
    const configDigest = (await spoolWithDigest(PassThrough.from([config]) as Readable, null)).digest.slice('sha256:'.length);
    await addEntry(pack, `${configDigest}.json`, config);
    const manifest = [{ Config: `${configDigest}.json`, RepoTags: [dockerTagOf(record.name)], Layers: layerPaths }];
    await addEntry(pack, 'manifest.json', Buffer.from(JSON.stringify(manifest)));
    pack.finalize();
  })().catch((error: unknown) => out.destroy(error instanceof Error ? error : new Error(String(error))));
  return out;
}
