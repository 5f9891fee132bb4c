import { z } from 'zod';

const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = `${OCTET}(\\.${OCTET}){3}`;
const IPV6 = '[0-9a-fA-F]*:[0-9a-fA-F:.]*';
const NAME = '[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*';
const PORT = '([1-9]\\d{0,3}|[1-5]\\d{4}|6[0-4]\\d{3}|65[0-4]\\d{2}|655[0-2]\\d|6553[0-5])';
const PRIVATE_HOST_ENTRY = new RegExp(
  `^((${IPV4}|\\[${IPV6}\\]|${NAME}):${PORT}|${IPV4}/(3[0-2]|[12]?\\d)|${IPV6}/(12[0-8]|1[01]\\d|[1-9]?\\d))$`,
);

/** An exception to the egress proxy's refusal of private addresses: an exact host:port, or a CIDR. */
const PrivateHostEntry = z
  .string()
  .max(300)
  .regex(PRIVATE_HOST_ENTRY, 'an exact host:port (10.0.0.5:443, [fd00::5]:443, mirror.internal:443) or a CIDR (10.20.0.0/16)');

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
  egress: z.object({
    /** Exceptions to the egress proxy's refusal of loopback, link-local, private and metadata addresses. */
    allowPrivateHosts: z.array(z.string()),
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
  egress: z.strictObject({ allowPrivateHosts: z.array(PrivateHostEntry).max(64).optional() }).optional(),
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
