import { DEPLOYMENT_MODES } from '@sandcast/core';
import { z } from 'zod';

export const HealthResponseSchema = z.object({
  ok: z.boolean(),
  version: z.string(),
  database: z.enum(['pglite', 'postgres']),
  deploymentMode: z.enum(DEPLOYMENT_MODES),
});
export type HealthResponse = z.infer<typeof HealthResponseSchema>;
