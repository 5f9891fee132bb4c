import { ENVIRONMENT_NAME_PATTERN } from '@sandcast/core';
import { z } from 'zod';
import { SandboxSpecInputSchema, SandboxSpecSchema } from './sandbox-spec.ts';

const EnvironmentName = z
  .string()
  .regex(ENVIRONMENT_NAME_PATTERN, 'use 1-63 lowercase letters, digits, ".", "_" or "-", starting with a letter or digit');

/** Provider config as sent by a client; the provider's own schema validates it on the server. */
const ProviderConfig = z.record(z.string(), z.unknown());

export const CreateEnvironmentBodySchema = z.strictObject({
  name: EnvironmentName,
  provider: z.string().min(1),
  config: ProviderConfig.default({}),
  spec: SandboxSpecInputSchema.optional(),
  /** The provider connection whose account runs the sandboxes; required by providers that need one. */
  connectionId: z.string().min(1).max(64).nullable().optional(),
});
export type CreateEnvironmentBody = z.input<typeof CreateEnvironmentBodySchema>;

export const UpdateEnvironmentBodySchema = z
  .strictObject({
    name: EnvironmentName.optional(),
    provider: z.string().min(1).optional(),
    config: ProviderConfig.optional(),
    /** Merged over the current spec field by field. */
    spec: SandboxSpecInputSchema.optional(),
    connectionId: z.string().min(1).max(64).nullable().optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one of name, provider, config, spec, connectionId' });
export type UpdateEnvironmentBody = z.input<typeof UpdateEnvironmentBodySchema>;

/** How a stored secret field is returned: its value never leaves the server. */
export const SecretPlaceholderSchema = z.strictObject({ secret: z.literal(true), set: z.boolean() });

const EnvironmentRevisionRefSchema = z.object({
  id: z.string(),
  number: z.number().int(),
  createdAt: z.string(),
});

export const EnvironmentSchema = z.object({
  id: z.string(),
  name: z.string(),
  provider: z.string(),
  config: z.record(z.string(), z.unknown()),
  spec: SandboxSpecSchema,
  /** The provider connection it uses, or null. */
  connectionId: z.string().nullable(),
  currentRevision: EnvironmentRevisionRefSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type EnvironmentBody = z.infer<typeof EnvironmentSchema>;

export const EnvironmentListSchema = z.object({ environments: z.array(EnvironmentSchema) });

export const EnvironmentRevisionSchema = EnvironmentRevisionRefSchema.extend({
  environmentId: z.string(),
  provider: z.string(),
  config: z.record(z.string(), z.unknown()),
  spec: SandboxSpecSchema,
});
export type EnvironmentRevisionBody = z.infer<typeof EnvironmentRevisionSchema>;

export const EnvironmentRevisionListSchema = z.object({ revisions: z.array(EnvironmentRevisionSchema) });

/** PATCH answer: the environment, plus what the edit did to its active custom image. */
export const UpdateEnvironmentAnswerSchema = EnvironmentSchema.extend({
  customImageReconciliation: z
    .object({
      action: z.enum(['none', 'relinked', 'detached']),
      templateId: z.string().optional(),
      driftedPaths: z.array(z.string()).optional(),
    })
    .optional(),
});
