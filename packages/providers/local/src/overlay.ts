import { readFile } from 'node:fs/promises';
import { run, sleep } from './proc.ts';

/** The kernel takes mount options in one page; leave room for upperdir and workdir. */
const MAX_LOWERDIR_CHARS = 3000;

export interface OverlaySpec {
  /** Lower dirs, top first; relative entries are resolved against `cwd`. */
  lower: string[];
  upper: string;
  work: string;
  target: string;
  /** Directory relative lower dirs are resolved from (the layer store), to keep options short. */
  cwd: string;
}

/**
 * Mounts an overlay. `index`, `redirect_dir` and `metacopy` are off so that an upper dir is a
 * plain layer (whiteouts and opaque dirs only) and can become a lower dir of another mount after
 * capture.
 */
let volatileSupported: boolean | undefined;

export async function mountOverlay(spec: OverlaySpec): Promise<void> {
  const lowerdir = spec.lower.join(':');
  if (lowerdir.length > MAX_LOWERDIR_CHARS) throw new Error(`overlay lowerdir too long (${spec.lower.length} layers); squash the image`);
  const base = `lowerdir=${lowerdir},upperdir=${spec.upper},workdir=${spec.work},index=off,redirect_dir=off,metacopy=off`;
  // `volatile` (Linux 5.10+) skips the sync of the upper fs on unmount, so a capture does not wait
  // for the change to reach the disk; durability follows in the background (see captureSetup).
  let result =
    volatileSupported === false
      ? null
      : await run('mount', ['-t', 'overlay', 'overlay', '-o', `${base},volatile`, spec.target], { cwd: spec.cwd });
  if (result && result.code === 0) volatileSupported = true;
  else {
    if (result && volatileSupported === undefined) volatileSupported = false;
    result = await run('mount', ['-t', 'overlay', 'overlay', '-o', base, spec.target], { cwd: spec.cwd });
  }
  if (result.code !== 0) throw new Error(`mounting the overlay failed: ${result.stderr.trim()}`);
}

/** Unmounts; falls back to a lazy unmount when something still holds the mount. */
export async function unmount(target: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const result = await run('umount', [target]);
    if (result.code === 0 || /not mounted|no mount point|not found/i.test(result.stderr)) return;
    await sleep(20 * (attempt + 1));
  }
  await run('umount', ['-l', target]);
}

/** Mount points at or below `dir` in this mount namespace, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const points = info
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => !!point)
    .map((point) => point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8))))
    .filter((point) => point === dir || point.startsWith(prefix));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}
