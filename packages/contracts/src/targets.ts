import { z } from 'zod';
import { ConnectionRequirementSchema } from './connections.ts';

export const SandboxTargetSchema = z.object({
  provider: z.string(),
  displayName: z.string(),
  available: z.boolean(),
  unavailableReason: z.string().optional(),
  capabilities: z.record(z.string(), z.unknown()),
  /** JSON Schema derived from the provider's zod config schema; secret fields carry `secret: true`. */
  configSchema: z.record(z.string(), z.unknown()),
  /** Present when the provider runs in an account reached through a connection (`/api/connections`). */
  connection: ConnectionRequirementSchema.optional(),
});
export type SandboxTarget = z.infer<typeof SandboxTargetSchema>;

export const SandboxTargetListSchema = z.object({ targets: z.array(SandboxTargetSchema) });
