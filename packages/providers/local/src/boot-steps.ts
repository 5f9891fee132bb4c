import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { exists } from './fs-util.ts';

/**
 * The steps sandcast-boot (native/sandcast-boot.c, ADR 0034) runs before it execs a sandbox's
 * bwrap: what a start used to fork one host command each for. Paths are the provider's own (the
 * instance dir, the layer store, the image's host dirs); nothing here comes from a sandbox.
 */

/** The kernel takes mount options in one page; leave room for upperdir and workdir. */
const MAX_LOWERDIR_CHARS = 3000;

export const hostDirKey = (dir: string) => dir.replace(/^\/+/, '').replaceAll('/', '_');

/** Steps that mount a new instance disk at `disk` and make the upper and work dirs of the root and of every host dir. */
export async function newDiskSteps(params: { file: string; disk: string; hostDirs: string[] }): Promise<string[]> {
  const { file, disk } = params;
  // An upper dir's mode is the mode of the directory it covers inside (`/`, `/usr`): set
  // explicitly, whatever the server's umask (077 would make them 0700 for the sandbox's users).
  const steps = ['dir', disk, '700', 'disk', file, disk, 'dir', join(disk, 'upper'), '755', 'dir', join(disk, 'work'), '700'];
  const modes = await Promise.all(params.hostDirs.map(async (hostDir) => ((await stat(hostDir)).mode & 0o7777).toString(8)));
  params.hostDirs.forEach((hostDir, index) => {
    const base = join(disk, 'host', hostDirKey(hostDir));
    steps.push('dir', join(disk, 'host'), '700', 'dir', base, '700');
    steps.push('dir', join(base, 'upper'), modes[index]!, 'dir', join(base, 'work'), '700');
  });
  return steps;
}

function lowerdir(lower: string[]): string {
  const joined = lower.join(':');
  if (joined.length > MAX_LOWERDIR_CHARS) throw new Error(`overlay lowerdir too long (${lower.length} layers); squash the image`);
  return joined;
}

/**
 * Steps that mount the rootfs overlay over the image's layers (top first, relative to the layer
 * store) and one overlay per host dir, over the layers' copies of it and the host's own.
 */
export async function overlaySteps(params: {
  layers: string[];
  hostDirs: string[];
  writable: string;
  rootfs: string;
  layersDir: string;
}): Promise<string[]> {
  const { writable, rootfs, layersDir } = params;
  const lower = [...params.layers].reverse();
  const steps = ['cd', layersDir, 'overlay', lowerdir(lower), join(writable, 'upper'), join(writable, 'work'), rootfs];
  for (const hostDir of params.hostDirs) {
    const key = hostDirKey(hostDir);
    const rel = hostDir.replace(/^\/+/, '');
    const present = await Promise.all(lower.map((layer) => exists(join(layersDir, layer, rel))));
    const layered = lower.filter((_, index) => present[index]).map((layer) => `${layer}/${rel}`);
    steps.push(
      'overlay',
      lowerdir([...layered, hostDir]),
      join(writable, 'host', key, 'upper'),
      join(writable, 'host', key, 'work'),
      join(rootfs, rel),
    );
  }
  return steps;
}
