import { CUSTOM_IMAGE_KINDS, CUSTOM_IMAGE_STATUSES, SETUP_SESSION_STATUSES } from '@sandcast/core';
import { z } from 'zod';
import { ExecCommandSchema, ExecEnvSchema, SandboxPathSchema } from './exec-limits.ts';
import { ExecTotalBytesSchema, ExecTruncatedSchema } from './exec-stream.ts';

export const SetupSessionSchema = z.object({
  id: z.string(),
  environmentId: z.string(),
  environmentRevisionId: z.string(),
  provider: z.string(),
  status: z.enum(SETUP_SESSION_STATUSES),
  /** The operator's words for the status ("Setup running", …). */
  statusLabel: z.string(),
  sourceTemplateId: z.string().nullable(),
  providerLeaseId: z.string().nullable(),
  /** How to connect, without credentials. */
  connectionSummary: z.record(z.string(), z.unknown()),
  expiresAt: z.string(),
  finishedAt: z.string().nullable(),
  failureReason: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SetupSessionBody = z.infer<typeof SetupSessionSchema>;

/** How to reach the setup sandbox. Only in answers, never stored. */
export const ConnectionPayloadSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('pty'), expiresAt: z.string() }),
  z.object({
    type: z.literal('ssh'),
    command: z.string(),
    host: z.string(),
    port: z.number().int(),
    username: z.string(),
    token: z.string().optional(),
    expiresAt: z.string(),
  }),
]);
export type ConnectionPayload = z.infer<typeof ConnectionPayloadSchema>;

export const CustomImageTemplateSchema = z.object({
  id: z.string(),
  environmentId: z.string(),
  provider: z.string(),
  kind: z.enum(CUSTOM_IMAGE_KINDS),
  providerRef: z.string().nullable(),
  digest: z.string().nullable(),
  sizeBytes: z.number().nullable(),
  status: z.enum(CUSTOM_IMAGE_STATUSES),
  refreshedFromTemplateId: z.string().nullable(),
  setupSessionId: z.string().nullable(),
  capturedRevisionId: z.string(),
  capturedFingerprint: z.string(),
  linkedRevisionId: z.string(),
  linkedFingerprint: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  failureReason: z.string().nullable(),
  capturedAt: z.string(),
  lastUsedAt: z.string().nullable(),
  supersededByTemplateId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type CustomImageTemplateBody = z.infer<typeof CustomImageTemplateSchema>;

export const CAPABILITY_STATES = ['template_setup', 'unsupported_provider', 'capture_unavailable'] as const;

export const CustomImageCapabilitySchema = z.object({
  state: z.enum(CAPABILITY_STATES),
  /** "Template setup", "Unsupported provider", "Setup capture unavailable". */
  label: z.string(),
  message: z.string().nullable(),
  interactiveSetup: z.boolean(),
  templateCapture: z.boolean(),
  connectionTypes: z.array(z.enum(['pty', 'ssh'])),
  templateRefKind: z.enum(CUSTOM_IMAGE_KINDS).nullable(),
  changeTracking: z.boolean(),
});
export type CustomImageCapability = z.infer<typeof CustomImageCapabilitySchema>;

export const CustomImageOverviewSchema = z.object({
  activeTemplate: CustomImageTemplateSchema.nullable(),
  /** Null when there is no active image. */
  activeTemplateMatchesConfig: z.boolean().nullable(),
  activeTemplateDrift: z.object({ paths: z.array(z.string()) }).nullable(),
  activeSession: SetupSessionSchema.nullable(),
  latestSession: SetupSessionSchema.nullable(),
  capability: CustomImageCapabilitySchema,
});
export type CustomImageOverview = z.infer<typeof CustomImageOverviewSchema>;

export const CustomImageTemplateListSchema = z.object({ templates: z.array(CustomImageTemplateSchema) });

export const StartSetupSessionBodySchema = z.strictObject({
  /** Seed from this image; it must be the environment's active one. */
  templateId: z.string().min(1).optional(),
  ttlSeconds: z.number().int().min(60).max(86_400).default(3600),
});
export type StartSetupSessionBody = z.input<typeof StartSetupSessionBodySchema>;

export const SetupSessionAnswerSchema = z.object({ session: SetupSessionSchema, connectionPayload: ConnectionPayloadSchema.nullable() });

export const FileChangeSchema = z.object({
  path: z.string(),
  kind: z.enum(['added', 'modified', 'deleted']),
  sizeBytes: z.number().nullable(),
  type: z.enum(['file', 'directory', 'symlink', 'other']),
});

export const SetupChangesSchema = z.object({
  changes: z.array(FileChangeSchema),
  /**
   * Likely secrets the capture would bake into the image: by file name, and by content (small text
   * files; `line` is 1-based). `reason` names the kind; the secret itself is never in the answer.
   */
  warnings: z.array(z.object({ path: z.string(), reason: z.string(), line: z.number().int().optional() })),
  /** How much of the changed content the secret scan read (it is bounded). */
  contentScan: z
    .object({
      filesScanned: z.number().int(),
      bytesScanned: z.number().int(),
      /** Files that qualified but were left unread at the byte or file limit. */
      filesSkipped: z.number().int(),
    })
    .optional(),
  totalBytes: z.number(),
  /** True when the list was cut at the limit. */
  truncated: z.boolean(),
});
export type SetupChanges = z.infer<typeof SetupChangesSchema>;

/** Bounded (EXEC_LIMITS) so an oversized request is a 400, never a provider's E2BIG. */
export const ExecBodySchema = z.strictObject({
  command: ExecCommandSchema,
  cwd: SandboxPathSchema.optional(),
  env: ExecEnvSchema.optional(),
  timeoutMs: z.number().int().min(1).max(600_000).optional(),
});
export type ExecBody = z.infer<typeof ExecBodySchema>;

/** The JSON answer of exec: output up to the server's cap per stream, with what the cap dropped. */
export const ExecResultSchema = z.object({
  exitCode: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
  timedOut: z.boolean(),
  truncated: ExecTruncatedSchema,
  totalBytes: ExecTotalBytesSchema,
});
export type ExecResultBody = z.infer<typeof ExecResultSchema>;

export const FinishSetupBodySchema = z.strictObject({ metadata: z.record(z.string(), z.unknown()).optional() });
export const FinishSetupAnswerSchema = z.object({ session: SetupSessionSchema, template: CustomImageTemplateSchema });

export const CancelSetupBodySchema = z.strictObject({ reason: z.string().max(500).optional() });
export const CancelSetupAnswerSchema = z.object({ session: SetupSessionSchema });

export const RollbackAnswerSchema = z.object({ activeTemplate: CustomImageTemplateSchema, supersededTemplate: CustomImageTemplateSchema });

export const RELINK_CLASSIFICATIONS = ['in_sync', 'runtime_only', 'boot_source_drift'] as const;
export const RelinkBodySchema = z.strictObject({ confirmBootSourceDrift: z.boolean().default(false) });
export const RelinkAnswerSchema = z.object({ template: CustomImageTemplateSchema, classification: z.enum(RELINK_CLASSIFICATIONS) });

export const DisableQuerySchema = z.strictObject({ deleteProviderTemplate: z.enum(['true', 'false']).optional() });
export const DisableAnswerSchema = z.object({
  template: CustomImageTemplateSchema,
  providerTemplateDeleted: z.boolean(),
  /** Why the provider artefact was kept, when deletion was asked for and did not happen. */
  providerTemplateNote: z.string().optional(),
});

export const ProbeAnswerSchema = z.object({
  ok: z.boolean(),
  imageId: z.string().nullable(),
  durationMs: z.number(),
  diagnostics: z.object({
    provider: z.string(),
    environmentRevisionId: z.string(),
    bootedFrom: z.enum(['custom_image', 'base']),
    exitCode: z.number().nullable(),
    output: z.string(),
    error: z.string().optional(),
  }),
});
export type ProbeAnswer = z.infer<typeof ProbeAnswerSchema>;

/** The operator's words for each setup session status (the UI shows them; answers carry `statusLabel`). */
export { SETUP_SESSION_LABELS } from '@sandcast/core';
