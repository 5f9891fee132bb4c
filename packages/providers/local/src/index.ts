export type { Limits } from './cgroups.ts';
export type { LocalConfig } from './config.ts';
export { BUILTIN_IMAGE, LOCAL_RUNTIME_KNOBS, localConfigSchema } from './config.ts';
export type { BuildBaseOptions } from './image-import.ts';
export type { ImageConfig, ImageOrigin, LayerRecord, LocalImage, ProgressListener } from './image-types.ts';
export type { LocalImageStoreApi } from './local-images.ts';
export type { LocalProvider, LocalProviderOptions } from './provider.ts';
export { createLocalProvider } from './provider.ts';
export { compileSeccompFilter } from './seccomp.ts';
