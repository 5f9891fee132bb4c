import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalProvider, type LocalProvider, type LocalProviderOptions } from '../src/index.ts';

/** Why the local provider cannot run here, or null. */
export async function localSkipReason(): Promise<string | null> {
  const probe = createLocalProvider({ dataDir: join(tmpdir(), 'sandcast-local-probe') });
  const availability = await probe.availability();
  return availability.available ? null : availability.reason;
}

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
