import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BUILD_STATIC = fileURLToPath(new URL('../scripts/build-static.sh', import.meta.url));

const builds = new Map<string, Promise<string>>();

/**
 * A small C helper that runs inside any image, built as a static binary by
 * scripts/build-static.sh on first use and cached beside its source by the source's hash
 * (`<dir>/build/<name>-<16 hex>`). Rejects with the builder's reason (no gcc, no libc6-dev).
 */
export function staticBinary(source: string, name = basename(source, '.c')): Promise<string> {
  let build = builds.get(source);
  if (!build) {
    build = (async () => {
      const hash = createHash('sha256')
        .update(await readFile(source))
        .digest('hex')
        .slice(0, 16);
      const built = join(dirname(source), 'build', `${name}-${hash}`);
      if (existsSync(built)) return built;
      return new Promise<string>((resolve, reject) => {
        execFile('/bin/sh', [BUILD_STATIC, source, name], (error, _stdout, stderr) => {
          if (!error && existsSync(built)) resolve(built);
          else reject(new Error(stderr.trim() || `building ${name} failed`));
        });
      });
    })();
    builds.set(source, build);
    // A failed build is tried again next time (gcc may have been installed since).
    build.catch(() => builds.delete(source));
  }
  return build;
}
