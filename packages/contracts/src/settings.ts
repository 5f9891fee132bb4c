import { z } from 'zod';

export const InstanceSettingsSchema = z.object({
  experimental: z.object({
    enableEnvironments: z.boolean(),
    enableSandboxDuplexBridge: z.boolean(),
  }),
  security: z.object({
    /** `network: host` for environments; never honoured in local_trusted mode. */
    allowHostNetwork: z.boolean(),
    /** Sandbox ports opened as `public` (no credential needed to open their URL). */
    allowPublicPorts: z.boolean(),
  }),
  sessions: z.object({
    /** Providers whose bindings a configurable agent's session may override with a one-off spec. */
    inlineProviders: z.array(z.string()),
    /** Top-level config fields such a one-off spec may set. */
    inlineConfigFields: z.array(z.string()),
    /** Attached checkpoints kept per checkpointed sandbox. */
    checkpointRetention: z.number().int(),
  }),
  fleet: z.object({
    /** Resource sandboxes one session may have at once. */
    maxSandboxesPerSession: z.number().int(),
    /** CPUs they may reserve together. */
    maxCpusPerSession: z.number(),
    /** Memory (MiB) they may reserve together. */
    maxMemoryMbPerSession: z.number().int(),
  }),
});
export type InstanceSettingsBody = z.infer<typeof InstanceSettingsSchema>;

/** PATCH body: any subset of the settings; unknown fields are refused. */
export const InstanceSettingsPatchSchema = z.strictObject({
  experimental: z
    .strictObject({
      enableEnvironments: z.boolean().optional(),
      enableSandboxDuplexBridge: z.boolean().optional(),
    })
    .optional(),
  security: z.strictObject({ allowHostNetwork: z.boolean().optional(), allowPublicPorts: z.boolean().optional() }).optional(),
  sessions: z
    .strictObject({
      inlineProviders: z.array(z.string().min(1).max(100)).max(100).optional(),
      inlineConfigFields: z.array(z.string().min(1).max(100)).max(100).optional(),
      checkpointRetention: z.number().int().min(1).max(1000).optional(),
    })
    .optional(),
  fleet: z
    .strictObject({
      maxSandboxesPerSession: z.number().int().min(0).max(1000).optional(),
      maxCpusPerSession: z.number().min(0).max(100_000).optional(),
      maxMemoryMbPerSession: z.number().int().min(0).max(1_000_000_000).optional(),
    })
    .optional(),
});
export type InstanceSettingsPatchBody = z.infer<typeof InstanceSettingsPatchSchema>;
