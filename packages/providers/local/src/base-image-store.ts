import type { BaseImageInfo, BaseImageStore } from '@sandcast/provider-sdk';
import type { LocalImage } from './image-types.ts';
import type { LocalImageStoreApi } from './provider.ts';

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
export function asBaseImageStore(images: LocalImageStoreApi): BaseImageStore {
  return {
    list: async () => (await images.list()).map(toInfo),
    importArchive: async (tarPath, name, onProgress) => toInfo(await images.importRootfs(tarPath, name, onProgress)),
    build: async (recipe, onProgress) =>
      toInfo(await images.buildBase(recipe.distro, { name: recipe.name, release: recipe.release }, onProgress)),
    export: (idOrName) => images.exportImage(idOrName),
    remove: (idOrName) => images.remove(idOrName),
  };
}
