/**
 * A committed copy of a sandbox's workspace (durability `checkpointed`). The bytes live in the
 * blob store as content-addressed chunks and a manifest; the record says what it cost and whether
 * the compute that took it was still the sandbox's when it was attached.
 */
export const CHECKPOINT_TRIGGERS = ['auto', 'manual', 'idle'] as const;
export type CheckpointTrigger = (typeof CHECKPOINT_TRIGGERS)[number];

export interface Checkpoint {
  id: string;
  sandboxId: string;
  /** The generation whose compute was captured; a fenced-out generation's checkpoint is never attached. */
  generation: number;
  /** sha256 of the manifest; a restore verifies it. */
  manifestDigest: string;
  /** Bytes this checkpoint added to the blob store (what changed). */
  storedBytes: number;
  /** Bytes of every file in the workspace. */
  totalBytes: number;
  fileCount: number;
  /** Paths added, changed or deleted since the previous checkpoint. */
  changedPaths: number;
  trigger: CheckpointTrigger;
  /** Null until attached (compare-and-set on the sandbox's generation). */
  attachedAt: string | null;
  createdAt: string;
}
