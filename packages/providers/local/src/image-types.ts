/** Process defaults an image carries (what Docker calls the image config). */
export interface ImageConfig {
  env: Record<string, string>;
  workdir: string;
  user: string;
}

export type ImageOrigin = 'builtin' | 'import' | 'debootstrap' | 'capture';

/** Stored metadata of an image: `images/<id>.json`. Immutable once written. */
export interface ImageRecord {
  id: string;
  name: string;
  /** Layer ids, bottom first. */
  layers: string[];
  /**
   * Host directories that sit below the layers at these paths (the built-in base: `/usr`). Each
   * gets an overlay of its own whose lowest layer is the host directory, read-only.
   */
  hostDirs: string[];
  config: ImageConfig;
  origin: ImageOrigin;
  /** The image this one was captured from. */
  parentId: string | null;
  createdAt: string;
}

/** Stored metadata of a layer: `layers/<id>.json` beside the directory `layers/<id>/`. */
export interface LayerRecord {
  id: string;
  /** Bytes of regular files and symlinks in the layer. */
  sizeBytes: number;
  /**
   * `sha256:<hex>` of the layer as an uncompressed Docker layer tar (the `diff_id`), or null while
   * it is being computed after a capture.
   */
  digest: string | null;
  createdAt: string;
}

/** An image as the image-store API returns it. */
export interface LocalImage extends Omit<ImageRecord, 'layers'> {
  layers: LayerRecord[];
  sizeBytes: number;
}

export type ProgressListener = (progress: { phase: string; fraction?: number | undefined }) => void;
