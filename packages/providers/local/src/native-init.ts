import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { run } from './proc.ts';

const SOURCE = fileURLToPath(new URL('../native/sandcast-init.c', import.meta.url));
const BUILD_SCRIPT = fileURLToPath(new URL('../scripts/build-init.sh', import.meta.url));

/**
 * The sandbox's pid 1, built from native/sandcast-init.c by scripts/build-init.sh and cached by
 * the source's hash. Builds it when missing (gcc, a few hundred ms); the error says what to
 * install when it cannot.
 */
export async function ensureInitBinary(): Promise<{ path: string } | { error: string }> {
  const hash = createHash('sha256')
    .update(await readFile(SOURCE))
    .digest('hex')
    .slice(0, 16);
  const path = fileURLToPath(new URL(`../native/build/sandcast-init-${hash}`, import.meta.url));
  if (existsSync(path)) return { path };
  const built = await run('/bin/sh', [BUILD_SCRIPT]);
  if (built.code !== 0 || !existsSync(path)) {
    return { error: `the sandbox init could not be built: ${built.stderr.trim().split('\n').at(-1) ?? `exit ${built.code}`}` };
  }
  return { path };
}
