import { describeProviderConformance } from '@sandcast/provider-sdk/testing';
import { afterAll } from 'vitest';
import type { LocalProvider } from '../src/index.ts';
import { BASE_CONFIG, localSkipReason, type TempProvider, tempProvider } from './support.ts';

let temp: TempProvider | null = null;

afterAll(async () => {
  await temp?.dispose();
}, 60_000);

describeProviderConformance({
  name: 'local',
  createProvider: async () => {
    temp = await tempProvider();
    return temp.provider;
  },
  config: BASE_CONFIG,
  skipReason: localSkipReason,
  isolatedRoot: true,
  // A crash or an outside kill: the sandbox's pid 1 dies, taking every process with it.
  vanish: async (provider, instanceId) => {
    const local = provider as LocalProvider;
    const listed = (await local.listInstances()).find((i) => i.instanceId === instanceId);
    if (!listed) throw new Error(`vanish: ${instanceId} is not listed`);
    const { readFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const record = JSON.parse(await readFile(join(temp!.dataDir, 'providers/local/instances', instanceId, 'instance.json'), 'utf8')) as {
      initPid: number;
    };
    process.kill(record.initPid, 'SIGKILL');
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(record.initPid, 0);
        await new Promise((r) => setTimeout(r, 10));
      } catch {
        return;
      }
    }
  },
});
