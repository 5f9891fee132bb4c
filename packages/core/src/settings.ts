/** Instance-wide settings. Experimental features are off until an operator opts in. */
export interface InstanceSettings {
  experimental: {
    /** Environment management and custom images. Default: false. */
    enableEnvironments: boolean;
    /** The duplex host↔sandbox bridge (the kill switch for it). Default: false. */
    enableSandboxDuplexBridge: boolean;
  };
  security: {
    /**
     * Lets environments use `network: host`, the host's own network stack (its loopback services,
     * this server's API included). Never in local_trusted mode, whatever this says. Default: false.
     */
    allowHostNetwork: boolean;
    /** Lets sandbox ports be opened `public`: their URL answers anyone who reaches it. Default: false. */
    allowPublicPorts: boolean;
  };
  egress: {
    /**
     * Exceptions to the egress proxy's refusal of loopback, link-local, private and metadata
     * addresses: exact `host:port` pairs (`10.0.0.5:443`, `[fd00::5]:443`, `mirror.internal:443`)
     * or CIDR ranges (`10.20.0.0/16`). An allowlist still decides which hosts a sandbox may ask
     * for. Default: none.
     */
    allowPrivateHosts: string[];
  };
  sessions: {
    /** Providers whose bindings a configurable agent's session may override with a one-off spec. Default: none. */
    inlineProviders: string[];
    /** Top-level config fields such a one-off spec may set. Default: `cpu`, `memoryMb`. */
    inlineConfigFields: string[];
    /** Attached checkpoints kept per checkpointed sandbox; older ones are deleted with their unshared chunks. Default: 20. */
    checkpointRetention: number;
  };
  fleet: {
    /** Resource sandboxes one session may have at once (not deleted). Default: 5. */
    maxSandboxesPerSession: number;
    /** CPUs those sandboxes may reserve together. Default: 8. */
    maxCpusPerSession: number;
    /** Memory (MiB) those sandboxes may reserve together. Default: 16384. */
    maxMemoryMbPerSession: number;
  };
}

export const DEFAULT_INSTANCE_SETTINGS: InstanceSettings = {
  experimental: { enableEnvironments: false, enableSandboxDuplexBridge: false },
  security: { allowHostNetwork: false, allowPublicPorts: false },
  egress: { allowPrivateHosts: [] },
  sessions: { inlineProviders: [], inlineConfigFields: ['cpu', 'memoryMb'], checkpointRetention: 20 },
  fleet: { maxSandboxesPerSession: 5, maxCpusPerSession: 8, maxMemoryMbPerSession: 16384 },
};

export interface InstanceSettingsPatch {
  experimental?: Partial<InstanceSettings['experimental']> | undefined;
  security?: Partial<InstanceSettings['security']> | undefined;
  egress?: Partial<InstanceSettings['egress']> | undefined;
  sessions?: Partial<InstanceSettings['sessions']> | undefined;
  fleet?: Partial<InstanceSettings['fleet']> | undefined;
}

/** Applies a partial update; fields not named keep their value. */
export function mergeSettings(current: InstanceSettings, patch: InstanceSettingsPatch): InstanceSettings {
  return {
    experimental: { ...current.experimental, ...stripUndefined(patch.experimental ?? {}) },
    security: { ...current.security, ...stripUndefined(patch.security ?? {}) },
    egress: { ...current.egress, ...stripUndefined(patch.egress ?? {}) },
    sessions: { ...current.sessions, ...stripUndefined(patch.sessions ?? {}) },
    fleet: { ...current.fleet, ...stripUndefined(patch.fleet ?? {}) },
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
