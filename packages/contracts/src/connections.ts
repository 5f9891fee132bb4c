import { CONNECTION_NAME_PATTERN } from '@sandcast/core';
import { z } from 'zod';
import { SecretPlaceholderSchema } from './environments.ts';

const ConnectionName = z
  .string()
  .regex(CONNECTION_NAME_PATTERN, 'use 1-63 lowercase letters, digits, ".", "_" or "-", starting with a letter or digit');

/** Checked by the provider's connection schema on the server. */
const Fields = z.record(z.string().max(128), z.unknown());

export const CreateConnectionBodySchema = z.strictObject({
  name: ConnectionName,
  provider: z.string().min(1).max(64),
  config: Fields.default({}),
  /** Write-only: stored encrypted, answered only as `{secret: true, set: true}`. */
  secrets: Fields.default({}),
});
export type CreateConnectionBody = z.input<typeof CreateConnectionBodySchema>;

export const UpdateConnectionBodySchema = z
  .strictObject({
    name: ConnectionName.optional(),
    config: Fields.optional(),
    /** Replaces the named secrets; a field sent as its placeholder, or left out, keeps its value. */
    secrets: Fields.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'send at least one of name, config, secrets' });
export type UpdateConnectionBody = z.input<typeof UpdateConnectionBodySchema>;

export const ConnectionSchema = z.object({
  id: z.string(),
  name: z.string(),
  provider: z.string(),
  config: z.record(z.string(), z.unknown()),
  /** Every stored secret, as its placeholder; the values never leave the server. */
  secrets: z.record(z.string(), SecretPlaceholderSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ConnectionBody = z.infer<typeof ConnectionSchema>;

export const ConnectionListSchema = z.object({ connections: z.array(ConnectionSchema) });

/** `POST /api/connections/:id/test`: reachable with these credentials, or why not. */
export const ConnectionTestAnswerSchema = z.union([
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), reason: z.string() }),
]);
export type ConnectionTestAnswer = z.infer<typeof ConnectionTestAnswerSchema>;

/** How a provider that needs a connection describes one, for the connection form. */
export const ConnectionRequirementSchema = z.object({
  /** JSON Schema of the non-secret fields. */
  configSchema: z.record(z.string(), z.unknown()),
  /** JSON Schema of the secret fields (each carries `secret: true`). */
  secretsSchema: z.record(z.string(), z.unknown()),
});
