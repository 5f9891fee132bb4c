import type { Readable } from 'node:stream';

/** A base image a provider keeps in its own store (the local provider's layered images). */
export interface BaseImageInfo {
  id: string;
  name: string;
  /** How it was made: `builtin`, `import`, `debootstrap`, `capture`, … */
  origin: string;
  sizeBytes: number;
  layers: number;
  /** `sha256:` digest of the top layer, or null while it is being computed. */
  digest: string | null;
  parentId: string | null;
  createdAt: string;
}

export type BaseImageProgress = (progress: { phase: string; fraction?: number | undefined }) => void;

/** Recipes `build` knows. */
export interface BaseImageRecipe {
  distro: 'debian';
  /** Image name; default derived from the release. */
  name?: string | undefined;
  /** Default: the release of the machine the server runs on. */
  release?: string | undefined;
}

/**
 * Optional on a provider (`baseImages`): a store of base images it boots sandboxes from, for
 * providers that do not use someone else's registry. Environments name an image in their config.
 */
export interface BaseImageStore {
  list(): Promise<BaseImageInfo[]>;
  /** Imports a rootfs tarball or a `docker save` archive. */
  importArchive(tarPath: string, name: string, onProgress?: BaseImageProgress): Promise<BaseImageInfo>;
  build(recipe: BaseImageRecipe, onProgress?: BaseImageProgress): Promise<BaseImageInfo>;
  /** An archive `docker load` accepts. */
  export(idOrName: string): Promise<Readable>;
  /** Removes it and the layers nothing else references; ProviderError `in_use` while used. */
  remove(idOrName: string): Promise<void>;
}
