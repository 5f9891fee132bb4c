import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CreatedSandbox, ForkTarget } from '@sandcast/provider-sdk';
import type { Cgroups } from './cgroups.ts';
import { freezeDisk } from './disk.ts';
import { localError } from './errors.ts';
import { removeTree } from './fs-util.ts';
import type { ImageStore } from './image-store.ts';
import type { ImageRecord } from './image-types.ts';
import type { InstanceRecord, Instances } from './instances.ts';
import { newId } from './layout.ts';
import { run, runOk } from './proc.ts';
import { squashLayers } from './squash.ts';

/**
 * The layers an image made of `layers` plus one more on top has: the base kept, everything above
 * it folded into one layer once the chain is deeper than `maxLayers` (overlayfs has a depth limit,
 * and every layer costs a lookup). Shared by capture and fork.
 */
export async function stackLayer(store: ImageStore, layers: string[], layerId: string, maxLayers: number): Promise<string[]> {
  const stacked = [...layers, layerId];
  if (stacked.length <= maxLayers) return stacked;
  const dest = await store.stagingDir('squash');
  await squashLayers(
    stacked.slice(1).map((id) => store.layerDir(id)),
    dest,
  );
  return [stacked[0]!, (await store.adoptLayer(dest)).id];
}

/**
 * The copy path, where the disk cannot be cloned: copies a running sandbox's upper dirs into a new
 * immutable layer while its processes are frozen (cgroup freezer), then thaws it. The source keeps running over its own upper: a mounted
 * overlay's layers cannot be swapped under live processes, so stacking the upper itself is not
 * possible here, and hard links would let the source's later in-place writes show through in
 * the forks. The copy is `cp -a --reflink=auto` (a clone where the filesystem offers it): its
 * cost follows what the sandbox changed over its image, paid once for all the forks.
 */
async function freezeUpper(params: { store: ImageStore; instances: Instances; cgroups: Cgroups; record: InstanceRecord }): Promise<string> {
  const { store, instances, cgroups, record } = params;
  const staging = await store.stagingDir('fork');
  await cgroups.freeze(record.id, true);
  try {
    const [root, ...hostUppers] = instances.upperDirs(record);
    // -a keeps owners, modes, hard links, xattrs (overlay's opaque marks) and whiteout devices.
    await runOk('cp', ['-a', '--reflink=auto', '--', `${root!.dir}/.`, staging]);
    for (const host of hostUppers) {
      const entries = await readdir(host.dir).catch(() => []);
      if (entries.length === 0) continue;
      const target = join(staging, host.sandboxPath);
      await mkdir(target, { recursive: true });
      // What the host dir's upper holds wins over whatever the root upper has at the same path.
      for (const entry of entries) await removeTree(join(target, entry));
      await runOk('cp', ['-a', '--reflink=auto', '--', `${host.dir}/.`, target]);
    }
  } catch (error) {
    await removeTree(staging).catch(() => undefined);
    throw error;
  } finally {
    await cgroups.freeze(record.id, false);
  }
  return (await store.adoptLayer(staging)).id;
}

/**
 * Clones a running sandbox's disk once per fork (ADR 0031): its processes are frozen (cgroup
 * freezer), its ext4 is frozen too (`fsfreeze` writes out what is still in the page cache and holds
 * new writes), each clone shares the file's blocks (FICLONE: constant time whatever the
 * workspace's size), then both thaw. The host-dir uppers live on the same disk, so they come
 * along. Clones made before a failure are removed.
 */
async function cloneDisks(params: { instances: Instances; cgroups: Cgroups; record: InstanceRecord; ids: string[] }): Promise<void> {
  // A second freeze of a frozen filesystem fails (EBUSY), and the first thaw would end the other's
  // freeze: forks of one source take turns for this step.
  const previous = quiescing.get(params.record.id) ?? Promise.resolve();
  const turn = previous.then(() => cloneFrozen(params));
  const settled = turn.catch(() => undefined);
  quiescing.set(params.record.id, settled);
  void settled.then(() => {
    if (quiescing.get(params.record.id) === settled) quiescing.delete(params.record.id);
  });
  return turn;
}

/** Sources being frozen for a clone, by instance id: the last turn queued. */
const quiescing = new Map<string, Promise<void>>();

async function cloneFrozen(params: { instances: Instances; cgroups: Cgroups; record: InstanceRecord; ids: string[] }): Promise<void> {
  const { instances, cgroups, record, ids } = params;
  const made: string[] = [];
  await cgroups.freeze(record.id, true);
  try {
    const thaw = await freezeDisk(join(instances.dir(record.id), 'disk'));
    try {
      for (const id of ids) {
        await instances.disks.clone(record, id);
        made.push(id);
      }
    } finally {
      await thaw();
    }
  } catch (error) {
    for (const id of made) await instances.disks.remove(id);
    throw error;
  } finally {
    await cgroups.freeze(record.id, false);
  }
}

/**
 * After a crash in the middle of a fork: a running source may have been left frozen, its
 * processes and its disk. Thawing one that is not frozen changes nothing.
 */
export async function thawInterruptedForks(instances: Instances, cgroups: Cgroups, live: InstanceRecord[]): Promise<void> {
  for (const record of live) {
    if (record.stopped) continue;
    if (record.diskStore) await run('fsfreeze', ['-u', join(instances.dir(record.id), 'disk')]);
    await cgroups.freeze(record.id, false).catch(() => undefined);
  }
}

/**
 * Forks a running sandbox. Where its disk can be cloned, every fork mounts a clone of it as its
 * own upper, over the source's layers. Elsewhere one frozen copy of its upper dirs becomes a
 * read-only layer that every fork stacks on the source's layers, each fork with an empty upper of
 * its own; that layer is kept while a fork uses it (live instances' layers are never collected).
 * All or nothing: when a fork cannot start, the ones started are torn down before the error is
 * thrown.
 */
export async function forkInstance(params: {
  store: ImageStore;
  instances: Instances;
  cgroups: Cgroups;
  record: InstanceRecord;
  targets: ForkTarget[];
  maxLayers: number;
  layersDir: string;
}): Promise<CreatedSandbox[]> {
  try {
    return (await forkRecords(params)).map((fork) => ({ instanceId: fork.id }));
  } catch (error) {
    throw localError(
      'backend',
      `forking sandbox ${params.record.id} failed: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
}

async function forkRecords(params: Parameters<typeof forkInstance>[0]): Promise<InstanceRecord[]> {
  const { store, record, instances } = params;
  const ids = params.targets.map(() => newId('sbx-'));
  const cloned = await instances.disks.canClone(record);
  let layers = record.layers;
  if (cloned) await cloneDisks({ ...params, ids });
  else layers = await stackLayer(store, record.layers, await freezeUpper(params), params.maxLayers);
  const image: ImageRecord = {
    id: record.imageId,
    name: `fork-of-${record.ownerId}`,
    layers,
    hostDirs: record.hostDirs,
    config: record.imageConfig,
    origin: 'capture',
    parentId: record.imageId,
    createdAt: new Date().toISOString(),
  };
  const startFork = (target: ForkTarget, index: number) =>
    instances.start({
      id: ids[index]!,
      kind: 'sandbox',
      ownerId: target.sandboxId,
      environmentId: record.environmentId,
      image,
      config: record.config,
      layersDir: params.layersDir,
      clonedDisk: cloned,
    });
  const outcomes = await Promise.allSettled(params.targets.map(startFork));
  const started = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) {
    for (const fork of started) await instances.teardown(fork.id).catch(() => undefined);
    throw failed.reason;
  }
  return started;
}
