import { z } from 'zod';

export const ActivityEntrySchema = z.object({
  id: z.string(),
  action: z.string(),
  actor: z.object({ role: z.string(), keyId: z.string().nullable() }),
  subjectType: z.string(),
  subjectId: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
});
export type ActivityEntry = z.infer<typeof ActivityEntrySchema>;

export const ActivityQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  action: z.string().optional(),
});

export const ActivityListSchema = z.object({ activity: z.array(ActivityEntrySchema) });
