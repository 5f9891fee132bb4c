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

/** Instance settings: defaults merged under whatever was stored. */
export function createSettingsService({ store }: { store: Store }) {
  const listeners: ((settings: InstanceSettings) => void)[] = [];
  const read = async (repos = store.repos): Promise<InstanceSettings> => {
    const stored = (await repos.settings.get()) as InstanceSettingsPatch | null;
    return stored ? mergeSettings(DEFAULT_INSTANCE_SETTINGS, stored) : structuredClone(DEFAULT_INSTANCE_SETTINGS);
  };
  return {
    get: () => read(),
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
      for (const listener of listeners) listener(next);
      return next;
    },
  };
}
