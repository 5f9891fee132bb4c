import { DURABILITIES, SANDBOX_DESIRED_STATUSES, SANDBOX_SOURCES, SANDBOX_STATUSES } from '@sandcast/core';
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
  /** `cold` (booted for the request), `warm_pool` (handed out of the environment's warm pool) or `fork`. */
  source: z.enum(SANDBOX_SOURCES),
  /** The sandbox it was forked from (`source: fork`), else null. */
  forkedFromId: z.string().nullable(),
  lastActivityAt: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SandboxBody = z.infer<typeof SandboxSchema>;

export const SandboxListSchema = z.object({ sandboxes: z.array(SandboxSchema) });

/** How each way a sandbox came to be reads in the CLI and the UI. */
export const SANDBOX_SOURCE_LABELS: Record<SandboxBody['source'], string> = {
  cold: 'cold boot',
  warm_pool: 'warm pool',
  fork: 'fork',
};

/** How many sandboxes one fork may make. */
export const FORK_COUNT_MAX = 16;

export const ForkSandboxBodySchema = z.strictObject({
  count: z
    .number({ error: `count must be a whole number from 1 to ${FORK_COUNT_MAX}` })
    .int(`count must be a whole number from 1 to ${FORK_COUNT_MAX}`)
    .min(1, `count must be at least 1`)
    .max(FORK_COUNT_MAX, `a fork makes at most ${FORK_COUNT_MAX} sandboxes; fork again for more`),
});
export type ForkSandboxBody = z.infer<typeof ForkSandboxBodySchema>;

export const ForkAnswerSchema = z.object({
  /** The new sandboxes, running, each with the source's files at the moment of the fork. */
  sandboxes: z.array(SandboxSchema),
  /** Always false: a fork copies the filesystem, not the running processes. */
  processesCopied: z.literal(false),
  note: z.string(),
});
export type ForkAnswer = z.infer<typeof ForkAnswerSchema>;

/** An environment's warm pool as the reconciler keeps it. */
export const WarmPoolStateSchema = z.object({
  /** Members wanted (`spec.warmPool.size`); 0 = no pool. */
  size: z.number().int(),
  maxAgeSeconds: z.number().int(),
  /** Members running from the current revision and image: what the next creates will claim. */
  ready: z.number().int(),
  /** Members still booting. */
  booting: z.number().int(),
  /** Why the last fill left the pool short (a boot failure, the sandbox limit), or null. */
  lastRefillError: z.string().nullable(),
  lastRefillAt: z.string().nullable(),
});
export type WarmPoolState = z.infer<typeof WarmPoolStateSchema>;
