import { DURABILITIES, SANDBOX_DESIRED_STATUSES, SANDBOX_STATUSES } from '@sandcast/core';
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
  /** What was asked for (`ready`, `stopped`, `deleted`); the reconciler moves `status` toward it. */
  desiredStatus: z.enum(SANDBOX_DESIRED_STATUSES),
  /** What the provider was last seen doing. */
  status: z.enum(SANDBOX_STATUSES),
  failureReason: z.string().nullable(),
  /** The session it belongs to, or null. */
  sessionId: z.string().nullable(),
  /** A resource sandbox's session-scoped id (`rsb_…`); null for a primary or plain sandbox. */
  logicalId: z.string().nullable(),
  durability: z.enum(DURABILITIES),
  /**
   * What it moved through the egress proxy since this server started (`sentBytes` out of the
   * sandbox, `receivedBytes` into it); null when it has had no proxy (containment `deny`).
   */
  egress: z.object({ sentBytes: z.number().int(), receivedBytes: z.number().int() }).nullable().optional(),
  /** Goes up whenever its compute is replaced. */
  generation: z.number().int(),
  lastActivityAt: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SandboxBody = z.infer<typeof SandboxSchema>;

export const SandboxListSchema = z.object({ sandboxes: z.array(SandboxSchema) });
