import {
  DEFAULT_INSTANCE_SETTINGS,
  type InstanceSettings,
  type InstanceSettingsPatch,
  mergeSettings,
  type Principal,
} from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { recordActivity } from './activity.service.ts';

export type SettingsService = ReturnType<typeof createSettingsService>;

/**
 * How long a read of the settings row answers later reads. An update through this server replaces
 * it at once; one made by another server sharing the database is seen within this long.
 */
const SETTINGS_CACHE_MS = 1000;

/**
 * Instance settings: defaults merged under whatever was stored. Nearly every request reads them
 * (the feature gate, the boot policy), so a read is kept for SETTINGS_CACHE_MS and shared by the
 * reads that arrive while it is in flight (ADR 0032); an update here replaces it when it commits.
 */
export function createSettingsService({ store, cacheMs = SETTINGS_CACHE_MS }: { store: Store; cacheMs?: number }) {
  const listeners: ((settings: InstanceSettings) => void)[] = [];
  const read = async (repos = store.repos): Promise<InstanceSettings> => {
    const stored = (await repos.settings.get()) as InstanceSettingsPatch | null;
    return stored ? mergeSettings(DEFAULT_INSTANCE_SETTINGS, stored) : structuredClone(DEFAULT_INSTANCE_SETTINGS);
  };
  /** The last read (or update) and until when it answers. An update replaces it, so a read begun before one answers only its own callers. */
  let cached: { value: Promise<InstanceSettings>; until: number } | null = null;
  const get = (): Promise<InstanceSettings> => {
    const now = performance.now();
    if (cached && now < cached.until) return cached.value.then((settings) => structuredClone(settings));
    const value = read();
    const entry = { value, until: now + cacheMs };
    cached = entry;
    value.catch(() => {
      // A failed read is not remembered; the next caller tries again.
      if (cached === entry) cached = null;
    });
    return value.then((settings) => structuredClone(settings));
  };
  return {
    get,
    /** Called with the new settings after each committed update (the bridge's kill switch). */
    onUpdated(listener: (settings: InstanceSettings) => void): void {
      listeners.push(listener);
    },
    async update(patch: InstanceSettingsPatch, actor: Principal): Promise<InstanceSettings> {
      const next = await store.transaction(async (repos) => {
        const next = mergeSettings(await read(repos), patch);
        await repos.settings.put(next);
        await recordActivity(repos, {
          action: 'instance.settings.updated',
          actor,
          subjectType: 'instance',
          subjectId: null,
          details: { patch },
        });
        return next;
      });
      cached = { value: Promise.resolve(structuredClone(next)), until: performance.now() + cacheMs };
      for (const listener of listeners) listener(next);
      return next;
    },
  };
}
