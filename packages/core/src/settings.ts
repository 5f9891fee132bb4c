/** Instance-wide settings. Experimental features are off until an operator opts in. */
export interface InstanceSettings {
  experimental: {
    /** Environment management and custom images. Default: false. */
    enableEnvironments: boolean;
    /** The duplex host↔sandbox bridge (the kill switch for it). Default: false. */
    enableSandboxDuplexBridge: boolean;
  };
}

export const DEFAULT_INSTANCE_SETTINGS: InstanceSettings = {
  experimental: { enableEnvironments: false, enableSandboxDuplexBridge: false },
};

export interface InstanceSettingsPatch {
  experimental?: Partial<InstanceSettings['experimental']> | undefined;
}

/** Applies a partial update; fields not named keep their value. */
export function mergeSettings(current: InstanceSettings, patch: InstanceSettingsPatch): InstanceSettings {
  return {
    experimental: { ...current.experimental, ...stripUndefined(patch.experimental ?? {}) },
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
