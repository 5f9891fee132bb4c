export type { AppDeps, AppServices, RouteEntry } from './app.ts';
export { BODY_LIMIT_BYTES, buildApp } from './app.ts';
export { createCheckpointEngine } from './checkpoints/engine.ts';
export { checkpointBlobDir, createFsBlobStore } from './checkpoints/fs-blob-store.ts';
export type {
  BlobStore,
  CaptureResult,
  CheckpointEngine,
  CheckpointManifest,
  ManifestEntry,
  RestoreResult,
  WorkspaceSource,
  WorkspaceTarget,
} from './checkpoints/types.ts';
export type { Clock } from './clock.ts';
export { createMovableClock } from './clock.ts';
export type { ServerConfig } from './config.ts';
export { loadConfig } from './config.ts';
export type { Reconciler } from './reconcilers/reconciler.ts';
export { createReconciler } from './reconcilers/reconciler.ts';
export type { RunningServer, StartOptions } from './server.ts';
export { startServer } from './server.ts';
export { CLAIM_TARGET_CACHE_MS } from './services/warm-pools.service.ts';
