import { readFile } from 'node:fs/promises';
import { run, sleep } from './proc.ts';

// Overlays are mounted by sandcast-boot (boot-steps.ts); unmounted here.

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
