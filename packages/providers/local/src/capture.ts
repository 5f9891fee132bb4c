import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TemplateRef } from '@sandcast/provider-sdk';
import { localError } from './errors.ts';
import { stackLayer } from './fork.ts';
import { exists, removeTree } from './fs-util.ts';
import type { ImageStore } from './image-store.ts';
import type { ImageRecord, LayerRecord, ProgressListener } from './image-types.ts';
import type { InstanceRecord, Instances } from './instances.ts';
import { newId } from './layout.ts';
import { runOk } from './proc.ts';

/**
 * Freezes a setup sandbox into a new image. The setup's processes are stopped and its overlays
 * unmounted first, so the upper dir is consistent; the host-directory uppers are renamed into the
 * root upper at their paths (one filesystem: the instance's disk), and the result is copied off
 * the instance's size-capped disk into a staging dir and renamed into the layer store, a plain
 * directory (ADR 0007). Instances made before their own disk existed are renamed, not copied.
 * Order for crash safety: layer directory, layer record, then the image record (temp file +
 * rename). A crash before the image record leaves an unreferenced layer, which the next start
 * removes.
 */
async function captureSetup(params: {
  store: ImageStore;
  instances: Instances;
  record: InstanceRecord;
  maxLayers: number;
  onProgress?: ProgressListener | undefined;
}): Promise<{ image: ImageRecord; layer: LayerRecord }> {
  const { store, instances, record } = params;
  const progress = params.onProgress ?? (() => undefined);
  progress({ phase: 'stopping setup processes', fraction: 0 });
  await instances.stopProcesses(record);
  await instances.unmountOverlays(record.id);

  progress({ phase: 'freezing layer', fraction: 0.5 });
  const [root, ...hostUppers] = instances.upperDirs(record);
  for (const host of hostUppers) {
    const entries = await readdir(host.dir).catch(() => []);
    if (entries.length === 0) continue;
    const target = join(root!.dir, host.sandboxPath);
    if (!(await exists(target))) {
      await mkdir(join(target, '..'), { recursive: true });
      await rename(host.dir, target);
    } else {
      for (const entry of entries) {
        await removeTree(join(target, entry));
        await rename(join(host.dir, entry), join(target, entry));
      }
    }
  }
  let frozen = root!.dir;
  if (record.diskMb) {
    progress({ phase: 'copying the change off the sandbox disk', fraction: 0.6 });
    frozen = await store.stagingDir('capture');
    // -a keeps owners, modes, hard links, xattrs (overlay's opaque marks) and whiteout devices.
    await runOk('cp', ['-a', '--reflink=auto', '--', `${root!.dir}/.`, frozen]);
  }
  const layer = await store.adoptLayer(frozen);
  // Keep the base, fold everything captured above it into one layer when the chain is too deep.
  if (record.layers.length + 1 > params.maxLayers) progress({ phase: 'squashing layers', fraction: 0.7 });
  const layers = await stackLayer(store, record.layers, layer.id, params.maxLayers);
  const id = newId('img-');
  let name = `capture-${record.ownerId}`;
  if (await store.resolve(name)) name = `${name}-${id.slice(-6)}`;
  const image: ImageRecord = {
    id,
    name,
    layers,
    hostDirs: record.hostDirs,
    config: record.imageConfig,
    origin: 'capture',
    parentId: record.imageId,
    createdAt: new Date().toISOString(),
  };
  await store.writeImage(image);
  progress({ phase: 'captured', fraction: 1 });
  const top = (await store.readLayer(layers.at(-1)!)) ?? layer;
  return { image, layer: top };
}

/**
 * The provider's captureTemplate on a live setup record: freeze it (captureSetup), forget the
 * setup at once and tear its leftovers (cgroups, work dirs) down in the background, and answer
 * the image as a template reference. Its digest is computed later (`afterCapture`).
 */
export async function captureLease(params: {
  store: ImageStore;
  instances: Instances;
  record: InstanceRecord;
  maxLayers: number;
  onProgress?: ProgressListener | undefined;
  afterCapture: (layerId: string) => void;
  inBackground: (work: Promise<void>) => void;
}): Promise<TemplateRef> {
  const { store, instances, record } = params;
  let captured: Awaited<ReturnType<typeof captureSetup>>;
  try {
    captured = await captureSetup(params);
  } catch (error) {
    throw localError(
      'capture_failed',
      `capturing setup ${record.id} failed: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  } finally {
    // The setup is already stopped and unmounted: forget it now, remove its leftovers after the capture returns.
    await rm(join(instances.dir(record.id), 'instance.json'), { force: true });
    params.inBackground(instances.teardown(record.id).catch(() => undefined));
  }
  params.afterCapture(captured.layer.id);
  const local = await store.toLocalImage(captured.image);
  return {
    kind: 'image',
    ref: captured.image.id,
    sizeBytes: local.sizeBytes,
    metadata: {
      imageId: captured.image.id,
      imageName: captured.image.name,
      layerId: captured.layer.id,
      layerCount: captured.image.layers.length,
      digestPending: true,
    },
  };
}
