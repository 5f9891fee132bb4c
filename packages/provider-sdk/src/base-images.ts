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

/** An import request: the archive on the server's disk and the name it is stored under. */
export interface BaseImageImport {
  tarPath: string;
  name: string;
  /** Cap on the uncompressed bytes of the archive and of the image; default the provider's own. */
  maxBytes?: number | undefined;
  onProgress?: BaseImageProgress | undefined;
}

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
  /**
   * Imports a rootfs tarball or a `docker save` archive. The archive is untrusted: a path that
   * leaves it, or more than `maxBytes` uncompressed, is refused (ProviderError `invalid_input`,
   * `too_large`) and leaves nothing behind.
   */
  importArchive(request: BaseImageImport): Promise<BaseImageInfo>;
  build(recipe: BaseImageRecipe, onProgress?: BaseImageProgress): Promise<BaseImageInfo>;
  /** An archive `docker load` accepts. */
  export(idOrName: string): Promise<Readable>;
  /** Removes it and the layers nothing else references; ProviderError `in_use` while used. */
  remove(idOrName: string): Promise<void>;
}
