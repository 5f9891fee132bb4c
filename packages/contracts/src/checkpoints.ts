import { CHECKPOINT_TRIGGERS } from '@sandcast/core';
import { z } from 'zod';
import { ErrorCodeSchema } from './errors.ts';

/**
 * What an operation that found its sandbox's compute gone answers beside its result: the
 * sandbox was recovered onto new compute (its workspace restored from the last checkpoint);
 * running processes, open terminals and memory were lost.
 */
export const SandboxRecoveredSchema = z.object({
  fromGeneration: z.number().int(),
  toGeneration: z.number().int(),
  /** The checkpoint restored; null when none was taken yet (an empty workspace). */
  checkpointId: z.string().nullable(),
  processStateLost: z.literal(true),
});
export type SandboxRecovered = z.infer<typeof SandboxRecoveredSchema>;

/** A checkpoint id in a path: `ckp_` and 32 hex digits. */
export const CheckpointParamsSchema = z.strictObject({
  id: z.string().min(1).max(100),
  checkpointId: z
    .string()
    .regex(/^ckp_[0-9a-f]{32}$/, 'not a checkpoint id (ckp_ and 32 hex digits); list them with GET …/sandbox/checkpoints'),
});

export const CheckpointSchema = z.object({
  id: z.string(),
  /** The sandbox generation whose compute was captured. */
  generation: z.number().int(),
  trigger: z.enum(CHECKPOINT_TRIGGERS),
  /** Bytes this checkpoint added to the store (what changed since the one before). */
  storedBytes: z.number().int().nonnegative(),
  /** Bytes of every file in the workspace. */
  totalBytes: z.number().int().nonnegative(),
  fileCount: z.number().int().nonnegative(),
  /** Paths added, changed or deleted since the previous checkpoint. */
  changedPaths: z.number().int().nonnegative(),
  createdAt: z.string(),
  attachedAt: z.string().nullable(),
  /** The one a recovery restores. */
  current: z.boolean(),
});
export type CheckpointBody = z.infer<typeof CheckpointSchema>;

/** `GET /api/sessions/:id/sandbox/checkpoints`: newest first. */
export const CheckpointListSchema = z.object({
  checkpoints: z.array(CheckpointSchema),
  currentCheckpointId: z.string().nullable(),
  /** How many attached checkpoints the instance keeps per sandbox. */
  retention: z.number().int(),
});

/** The body of a manual checkpoint: nothing to say yet. */
export const CreateCheckpointBodySchema = z.strictObject({});

export const CheckpointAnswerSchema = z.object({
  checkpoint: CheckpointSchema,
  recovered: SandboxRecoveredSchema.optional(),
});

export const RestoreCheckpointAnswerSchema = z.object({
  /** The checkpoint the workspace now matches; it is the current one. */
  checkpoint: CheckpointSchema,
  recovered: SandboxRecoveredSchema.optional(),
});
export type RestoreCheckpointAnswer = z.infer<typeof RestoreCheckpointAnswerSchema>;

/** A restore with `Accept: application/x-ndjson`: progress lines, then `done` or `error`. */
export const RestoreOperationLineSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('progress'), phase: z.string(), fraction: z.number().optional() }),
  z.object({ type: z.literal('done'), result: RestoreCheckpointAnswerSchema }),
  z.object({ type: z.literal('error'), error: z.object({ code: ErrorCodeSchema, message: z.string() }) }),
]);
export type RestoreOperationLine = z.infer<typeof RestoreOperationLineSchema>;
