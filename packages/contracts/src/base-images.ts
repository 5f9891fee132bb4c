import { z } from 'zod';
import { ErrorCodeSchema } from './errors.ts';

export const BaseImageSchema = z.object({
  id: z.string(),
  name: z.string(),
  origin: z.string(),
  sizeBytes: z.number(),
  layers: z.number().int(),
  digest: z.string().nullable(),
  parentId: z.string().nullable(),
  createdAt: z.string(),
});
export type BaseImage = z.infer<typeof BaseImageSchema>;

export const BaseImageListSchema = z.object({ images: z.array(BaseImageSchema) });

export const BuildBaseImageBodySchema = z.strictObject({
  distro: z.literal('debian'),
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/)
    .optional(),
  release: z
    .string()
    .regex(/^[a-z]+$/, 'a Debian release name such as bookworm')
    .optional(),
});
export type BuildBaseImageBody = z.infer<typeof BuildBaseImageBodySchema>;

export const ImportBaseImageQuerySchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'use 1-63 lowercase letters, digits, ".", "_" or "-"'),
});

/**
 * Long image operations answer `application/x-ndjson`: progress lines, then one `done` or
 * `error` line. The HTTP status is 200 once the operation has started.
 */
export const ImageOperationLineSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('progress'), phase: z.string(), fraction: z.number().optional() }),
  z.object({ type: z.literal('done'), image: BaseImageSchema }),
  z.object({ type: z.literal('error'), error: z.object({ code: ErrorCodeSchema, message: z.string() }) }),
]);
export type ImageOperationLine = z.infer<typeof ImageOperationLineSchema>;
