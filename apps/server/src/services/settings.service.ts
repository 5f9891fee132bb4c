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
  const read = async (repos = store.repos): Promise<InstanceSettings> => {
    const stored = (await repos.settings.get()) as InstanceSettingsPatch | null;
    return stored ? mergeSettings(DEFAULT_INSTANCE_SETTINGS, stored) : structuredClone(DEFAULT_INSTANCE_SETTINGS);
  };
  return {
    get: () => read(),
    async update(patch: InstanceSettingsPatch, actor: Principal): Promise<InstanceSettings> {
      return store.transaction(async (repos) => {
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
    },
  };
}
