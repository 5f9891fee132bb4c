import {
  DURABILITIES,
  FLEET_MANAGE_ACTIONS,
  SANDBOX_ATTENTION_FLAGS,
  SANDBOX_DESIRED_STATUSES,
  SANDBOX_STATUSES,
  SESSION_STATUSES,
} from '@sandcast/core';
import { z } from 'zod';

/**
 * A resource sandbox's logical id as a caller sends it. Loose on purpose: any id this session did
 * not create — malformed, another session's, or none at all — gets the same 404.
 */
export const FleetSandboxIdSchema = z
  .string()
  .min(1)
  .max(100)
  .refine((id) => !id.includes('\0'), 'sandbox ids never contain a NUL character');

/** `sandbox_create`: a binding of the agent's policy, or the name of an environment one binds. */
export const CreateFleetSandboxBodySchema = z.strictObject({
  use: z.string().min(1).max(100).optional(),
});
export type CreateFleetSandboxBody = z.infer<typeof CreateFleetSandboxBodySchema>;

/** `sandbox_manage`; `restore` takes the checkpoint to go back to (default: the last one). */
export const ManageFleetSandboxBodySchema = z.strictObject({
  action: z.enum(FLEET_MANAGE_ACTIONS),
  checkpointId: z.string().min(1).max(100).optional(),
});
export type ManageFleetSandboxBody = z.infer<typeof ManageFleetSandboxBodySchema>;

/** A resource sandbox as its session sees it: addressed by its logical id, no provider id. */
export const FleetSandboxSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  bindingName: z.string().nullable(),
  environmentId: z.string().nullable(),
  environmentRevisionId: z.string(),
  environmentRevisionNumber: z.number().int().nullable(),
  imageId: z.string().nullable(),
  target: z.object({ provider: z.string() }),
  durability: z.enum(DURABILITIES),
  desiredState: z.enum(SANDBOX_DESIRED_STATUSES),
  observedState: z.enum(SANDBOX_STATUSES),
  failureReason: z.string().nullable(),
  generation: z.number().int(),
  /** Null until checkpoints exist for it. */
  lastCheckpointId: z.string().nullable(),
  reservation: z.object({ cpu: z.number(), memoryMb: z.number() }),
  lastActivityAt: z.string(),
  createdAt: z.string(),
});
export type FleetSandboxBody = z.infer<typeof FleetSandboxSchema>;
export const FleetSandboxListSchema = z.object({ sandboxes: z.array(FleetSandboxSchema) });

/** `GET /api/fleet`: every sandbox the instance keeps, with why an operator should look at it. */
const FleetOverviewRowSchema = z.object({
  id: z.string(),
  role: z.enum(['plain', 'primary', 'resource']),
  /** The resource sandbox's session-scoped id; null for the others. */
  logicalId: z.string().nullable(),
  session: z.object({ id: z.string(), status: z.enum(SESSION_STATUSES) }).nullable(),
  environment: z.object({ id: z.string(), name: z.string() }).nullable(),
  environmentRevisionNumber: z.number().int().nullable(),
  imageId: z.string().nullable(),
  provider: z.string(),
  desiredState: z.enum(SANDBOX_DESIRED_STATUSES),
  observedState: z.enum(SANDBOX_STATUSES),
  failureReason: z.string().nullable(),
  generation: z.number().int(),
  lastCheckpointId: z.string().nullable(),
  lastActivityAt: z.string(),
  attention: z.array(z.enum(SANDBOX_ATTENTION_FLAGS)),
});
export type FleetOverviewRow = z.infer<typeof FleetOverviewRowSchema>;
export const FleetOverviewQuerySchema = z.strictObject({
  includeDeleted: z.enum(['true', 'false']).optional(),
});
export const FleetOverviewSchema = z.object({ sandboxes: z.array(FleetOverviewRowSchema) });
