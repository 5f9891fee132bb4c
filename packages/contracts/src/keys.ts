import { API_KEY_ROLES } from '@sandcast/core';
import { z } from 'zod';

export const CreateApiKeyBodySchema = z.strictObject({
  name: z.string().min(1).max(100),
  role: z.enum(API_KEY_ROLES),
});
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBodySchema>;

export const ApiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  role: z.enum(API_KEY_ROLES),
  /** The first characters of the key, enough to recognise it; never the key itself. */
  prefix: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  /** Agents an agent key may start sessions for (admin keys may start any). */
  allowedAgentIds: z.array(z.string()),
});
export type ApiKey = z.infer<typeof ApiKeySchema>;

/** Answer to a create: the only time the secret key is shown. */
export const CreatedApiKeySchema = z.object({ key: ApiKeySchema, secret: z.string() });
export const ApiKeyListSchema = z.object({ keys: z.array(ApiKeySchema) });

/** PATCH body (admin): which agents an agent key may start sessions for. */
export const UpdateApiKeyBodySchema = z.strictObject({
  allowedAgentIds: z.array(z.string().min(1).max(100)).max(1000),
});
export type UpdateApiKeyBody = z.infer<typeof UpdateApiKeyBodySchema>;
