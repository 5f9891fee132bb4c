import type { Readable } from 'node:stream';
import type { BaseImageInfo, BaseImageProgress, BaseImageStore } from '@sandcast/provider-sdk';
import type { LocalImage } from './image-types.ts';

/** The parts of the provider's image store this adapter uses (kept structural: no import back into provider.ts). */
interface LocalImages {
  list(): Promise<LocalImage[]>;
  importRootfs(
    tarPath: string,
    name: string,
    options?: { maxBytes?: number | undefined; onProgress?: BaseImageProgress | undefined },
  ): Promise<LocalImage>;
  buildBase(
    distro: 'debian',
    options?: { name?: string | undefined; release?: string | undefined },
    onProgress?: BaseImageProgress,
  ): Promise<LocalImage>;
  exportImage(idOrName: string): Promise<Readable>;
  remove(idOrName: string): Promise<void>;
}

function toInfo(image: LocalImage): BaseImageInfo {
  return {
    id: image.id,
    name: image.name,
    origin: image.origin,
    sizeBytes: image.sizeBytes,
    layers: image.layers.length,
    digest: image.layers.at(-1)?.digest ?? null,
    parentId: image.parentId,
    createdAt: image.createdAt,
  };
}

/** The local image store as the provider contract's `baseImages`, for the server's image routes. */
export function asBaseImageStore(images: LocalImages): BaseImageStore {
  return {
    list: async () => (await images.list()).map(toInfo),
    importArchive: async ({ tarPath, name, maxBytes, onProgress }) =>
      toInfo(await images.importRootfs(tarPath, name, { maxBytes, onProgress })),
    build: async (recipe, onProgress) =>
      toInfo(await images.buildBase(recipe.distro, { name: recipe.name, release: recipe.release }, onProgress)),
    export: (idOrName) => images.exportImage(idOrName),
    remove: (idOrName) => images.remove(idOrName),
  };
}
