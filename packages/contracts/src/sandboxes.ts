import { SANDBOX_DESIRED_STATUSES, SANDBOX_STATUSES } from '@sandcast/core';
import { z } from 'zod';

export const CreateSandboxBodySchema = z.strictObject({ environmentId: z.string().min(1) });
export type CreateSandboxBody = z.infer<typeof CreateSandboxBodySchema>;

export const SandboxSchema = z.object({
  id: z.string(),
  environmentId: z.string().nullable(),
  environmentRevisionId: z.string(),
  /** The custom image it booted from; null when it booted from the base config. */
  imageId: z.string().nullable(),
  provider: z.string(),
  desiredStatus: z.enum(SANDBOX_DESIRED_STATUSES),
  status: z.enum(SANDBOX_STATUSES),
  failureReason: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SandboxBody = z.infer<typeof SandboxSchema>;

export const SandboxListSchema = z.object({ sandboxes: z.array(SandboxSchema) });
