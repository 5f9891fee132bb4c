import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { localError } from './errors.ts';
import { exportImageArchive } from './image-export.ts';
import { type BuildBaseOptions, buildDebianBase, type ImportOptions, importImage } from './image-import.ts';
import type { ImageStore } from './image-store.ts';
import type { LocalImage } from './image-types.ts';
import type { InstanceRecord } from './instances.ts';
import { dockerLayerTar, spoolWithDigest } from './layer-tar.ts';
import { run } from './proc.ts';

/** The local image store (`provider.images`). */
export interface LocalImageStoreApi {
  list(): Promise<LocalImage[]>;
  get(idOrName: string): Promise<LocalImage | null>;
  /**
   * Imports a rootfs tarball or a `docker save` archive as a one-layer image. The archive is
   * untrusted: see `importImage` for what is refused and what is left out.
   */
  importRootfs(tarPath: string, name: string, options?: Pick<ImportOptions, 'maxBytes' | 'onProgress'>): Promise<LocalImage>;
  /** `debootstrap --variant=minbase` of this machine's Debian release (or `options.release`). */
  buildBase(distro: 'debian', options?: BuildBaseOptions, onProgress?: ImportOptions['onProgress']): Promise<LocalImage>;
  /** The image as an archive `docker load` accepts. */
  exportImage(idOrName: string): Promise<Readable>;
  /** Removes the image and the layers nothing else references; `in_use` while a sandbox runs from it. */
  remove(idOrName: string): Promise<void>;
  /** Resolves when every layer digest of the image is known (captures compute theirs in the background). */
  waitForDigests(idOrName: string): Promise<LocalImage>;
}

/** What the images need from the running provider: readiness, and the sandboxes that hold layers. */
export interface LocalImagesHost {
  /** Resolves once the provider's layout exists and crash leftovers are gone. */
  ready(): Promise<void>;
  /** Live sandboxes; their layers are never collected. */
  liveInstances(): Promise<InstanceRecord[]>;
  /** Where exports spool a layer while its size and digest are learnt. */
  tmpDir: string;
}

/**
 * The image half of the local provider: the `images` API, the removal rule (`in_use` while a
 * sandbox runs from an image), and the background digests of captured layers.
 */
export function createLocalImages(store: ImageStore, host: LocalImagesHost) {
  const digests = new Map<string, { stop: () => void; done: Promise<void> }>();

  const scheduleDigest = async (layerId: string): Promise<void> => {
    const layer = await store.readLayer(layerId);
    if (!layer || layer.digest || digests.has(layerId)) return;
    // Captured upper dirs come from volatile overlays: flush the layer to disk before its digest
    // is recorded, so a layer with a digest is a durable one.
    await run('sync', ['-f', store.layerDir(layerId)]);
    if (digests.has(layerId)) return;
    const stream = dockerLayerTar(store.layerDir(layerId));
    const done = spoolWithDigest(stream, null)
      .then(async ({ digest }) => {
        const current = await store.readLayer(layerId);
        if (current && existsSync(store.layerDir(layerId))) await store.updateLayer({ ...current, digest });
      })
      .catch(() => undefined)
      .finally(() => digests.delete(layerId));
    digests.set(layerId, { stop: () => stream.destroy(), done });
  };

  const requireRecord = async (idOrName: string) => {
    const record = await store.resolve(idOrName);
    if (!record) throw localError('not_found', `no local image "${idOrName}"`);
    return record;
  };

  const remove = async (idOrName: string, missingOk: boolean): Promise<void> => {
    await host.ready();
    const image = await store.resolve(idOrName);
    if (!image) {
      if (missingOk) return;
      throw localError('not_found', `no local image "${idOrName}"`);
    }
    const live = await host.liveInstances();
    const users = live.filter((r) => r.imageId === image.id);
    if (users.length > 0) {
      throw localError(
        'in_use',
        `image ${image.name} is used by ${users.length} running or stopped sandbox(es) (${users.map((u) => u.id).join(', ')}); destroy them first`,
      );
    }
    await store.deleteImageRecord(image.id);
    const removed = await store.collectLayers(live.flatMap((r) => r.layers));
    for (const id of removed) digests.get(id)?.stop();
  };

  const api: LocalImageStoreApi = {
    list: async () => {
      await host.ready();
      await store.ensureBuiltin();
      return Promise.all((await store.listRecords()).map((r) => store.toLocalImage(r)));
    },
    get: async (idOrName) => {
      await host.ready();
      const record = await store.resolve(idOrName);
      return record ? store.toLocalImage(record) : null;
    },
    importRootfs: async (tarPath, name, options) => {
      await host.ready();
      return importImage(store, { tarPath, name, maxBytes: options?.maxBytes, onProgress: options?.onProgress });
    },
    buildBase: async (distro, buildOptions, onProgress) => {
      await host.ready();
      if (distro !== 'debian') throw localError('unsupported', `only debian bases can be built; import other systems as a rootfs tarball`);
      return buildDebianBase(store, buildOptions ?? {}, onProgress);
    },
    exportImage: async (idOrName) => {
      await host.ready();
      return exportImageArchive(store, await requireRecord(idOrName), host.tmpDir);
    },
    remove: (idOrName) => remove(idOrName, false),
    waitForDigests: async (idOrName) => {
      await host.ready();
      const record = await requireRecord(idOrName);
      for (const id of record.layers) await scheduleDigest(id);
      await Promise.all(record.layers.map((id) => digests.get(id)?.done));
      return store.toLocalImage(record);
    },
  };

  return {
    api,
    /** Removes an image a template names; a missing one is fine (already gone). */
    removeTemplate: (idOrName: string) => remove(idOrName, true),
    scheduleDigest,
    /** Stops every digest in flight and waits for them to settle. */
    async stopDigests(): Promise<void> {
      for (const { stop } of digests.values()) stop();
      await Promise.all([...digests.values()].map((d) => d.done));
    },
  };
}
