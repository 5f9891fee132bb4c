import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import { createLocalProvider, type LocalProvider, type LocalProviderOptions } from '../src/index.ts';
import { localSkipReason } from '../src/testing.ts';

export { localSkipReason };

/** Fails under CI=true, otherwise prints the reason; returns whether the tests should run. */
export async function requireLocal(suite: string): Promise<boolean> {
  const reason = await localSkipReason();
  if (!reason) return true;
  if (process.env.CI === 'true') throw new Error(`CI=true but the local provider cannot run (${suite}): ${reason}`);
  console.warn(`[local provider:${suite}] skipped: ${reason}`);
  return false;
}

export interface TempProvider {
  provider: LocalProvider;
  dataDir: string;
  /** Destroys every instance, closes the provider and removes the data dir. */
  dispose(): Promise<void>;
}

export async function tempProvider(options: Partial<LocalProviderOptions> = {}): Promise<TempProvider> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'sandcast-local-test-')));
  const provider = createLocalProvider({ ...options, dataDir });
  return {
    provider,
    dataDir,
    async dispose() {
      for (const instance of await provider.listInstances().catch(() => []))
        await provider.destroy(instance.instanceId).catch(() => undefined);
      // Closing again after the destroys lets the provider remove its (now empty) cgroup root.
      await provider.close?.();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export const BASE_CONFIG = {
  image: 'host',
  cpu: 1,
  memoryMb: 256,
  pidsLimit: 128,
  network: 'none' as const,
  env: {},
  workdir: '/workspace',
};

/**
 * A tiny rootfs made of the host's dash and the libraries it links, so import tests need no
 * download: `/bin/sh` and nothing else.
 */
export async function buildMiniRootfs(dir: string): Promise<void> {
  const { execFileSync } = await import('node:child_process');
  const { copyFile, mkdir } = await import('node:fs/promises');
  const { dirname } = await import('node:path');
  const shell = '/usr/bin/dash';
  const libs = execFileSync('ldd', [shell], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /(\/\S+)\s+\(0x/.exec(line)?.[1])
    .filter((path): path is string => !!path);
  await mkdir(join(dir, 'bin'), { recursive: true });
  await copyFile(shell, join(dir, 'bin/sh'));
  for (const lib of libs) {
    await mkdir(join(dir, dirname(lib)), { recursive: true });
    await copyFile(lib, join(dir, lib));
  }
  for (const sub of ['proc', 'dev', 'tmp', 'workspace', 'etc']) await mkdir(join(dir, sub), { recursive: true });
}

/**
 * `it` for a suite that needs the local provider: skipped with the reason when requireLocal said it
 * cannot run here (which it never says under CI=true, where it fails instead).
 */
export function localTest(runnable: () => boolean) {
  return (name: string, body: () => Promise<void>) =>
    it(name, async (ctx) => {
      if (!runnable()) ctx.skip('the local provider cannot run on this machine (the reason is printed above)');
      await body();
    }, 60_000);
}
