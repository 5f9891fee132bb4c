import type { Checkpoint, CheckpointTrigger } from '@sandcast/core';
import { and, desc, eq, inArray, isNotNull, isNull, lt, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { NO_RUNNING_SANDBOXES, type RunningSandboxes } from '../running-sandboxes.ts';
import { checkpointBlobs, checkpointChunks, checkpoints, sandboxes } from '../schema.ts';

type Row = typeof checkpoints.$inferSelect;

const toCheckpoint = (row: Row): Checkpoint => ({
  id: row.id,
  sandboxId: row.sandboxId,
  generation: row.generation,
  manifestDigest: row.manifestDigest,
  storedBytes: row.storedBytes,
  totalBytes: row.totalBytes,
  fileCount: row.fileCount,
  changedPaths: row.changedPaths,
  trigger: row.trigger,
  attachedAt: row.attachedAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
});

export interface NewCheckpoint {
  sandboxId: string;
  generation: number;
  manifestDigest: string;
  storedBytes: number;
  totalBytes: number;
  fileCount: number;
  changedPaths: number;
  trigger: CheckpointTrigger;
  /** Every blob the checkpoint needs: its chunks and its manifest. */
  digests: readonly string[];
}

/**
 * What recording a checkpoint came to. `recorded`: the row and its references are in, and
 * `unverified` lists the blobs this checkpoint is now the only reference of — a collector may
 * have deleted one of them just before, so the caller checks they still exist. `claimed`: some
 * blobs are being deleted by a collector right now; nothing was written, try again after it.
 */
export type RecordOutcome = { kind: 'recorded'; checkpoint: Checkpoint; unverified: string[] } | { kind: 'claimed'; digests: string[] };

/** How many rows one statement writes (the parameter limit of both databases is far above it). */
const BATCH = 1000;

/** A collector's claim rolled back on purpose (to leave nothing written). */
class ClaimedBlobs extends Error {
  constructor(readonly digests: string[]) {
    super('blobs claimed by a collector');
  }
}

/**
 * Checkpoints and the reference counts of their blobs. Nothing here takes a row lock: a
 * reference is an upsert that increments only a row no collector has claimed (refs ≥ 0), a
 * collector claims a blob with a compare-and-set from 0 to -1 before it deletes it, and the
 * unique digest key makes concurrent first references of one blob meet on one row.
 */
export function createCheckpointsRepo(db: Db, running: RunningSandboxes = NO_RUNNING_SANDBOXES) {
  const chunked = <T>(items: readonly T[]): T[][] => {
    const out: T[][] = [];
    for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
    return out;
  };

  return {
    async record(input: NewCheckpoint): Promise<RecordOutcome> {
      const digests = [...new Set(input.digests)].sort();
      try {
        return await db.transaction(async (tx) => {
          const [row] = await tx
            .insert(checkpoints)
            .values({
              id: newId('ckp'),
              sandboxId: input.sandboxId,
              generation: input.generation,
              manifestDigest: input.manifestDigest,
              storedBytes: input.storedBytes,
              totalBytes: input.totalBytes,
              fileCount: input.fileCount,
              changedPaths: input.changedPaths,
              trigger: input.trigger,
            })
            .returning();
          const checkpoint = toCheckpoint(row!);
          const unverified: string[] = [];
          const claimed: string[] = [];
          for (const batch of chunked(digests)) {
            await tx.insert(checkpointChunks).values(batch.map((digest) => ({ checkpointId: checkpoint.id, digest })));
            const counted = await tx
              .insert(checkpointBlobs)
              .values(batch.map((digest) => ({ digest, refs: 1 })))
              .onConflictDoUpdate({
                target: checkpointBlobs.digest,
                set: { refs: sql`${checkpointBlobs.refs} + 1` },
                setWhere: sql`${checkpointBlobs.refs} >= 0`,
              })
              .returning({ digest: checkpointBlobs.digest, refs: checkpointBlobs.refs });
            const seen = new Set<string>();
            for (const { digest, refs } of counted) {
              seen.add(digest);
              if (refs === 1) unverified.push(digest);
            }
            for (const digest of batch) if (!seen.has(digest)) claimed.push(digest);
          }
          if (claimed.length > 0) throw new ClaimedBlobs(claimed);
          return { kind: 'recorded' as const, checkpoint, unverified };
        });
      } catch (error) {
        if (error instanceof ClaimedBlobs) return { kind: 'claimed', digests: error.digests };
        throw error;
      }
    },

    /**
     * Attaches the checkpoint in one compare-and-set fenced on the sandbox's generation: the
     * sandbox's current checkpoint becomes this one only while the sandbox is still at the
     * generation that took it. Null when the generation moved on (the compute was fenced out).
     */
    async attach(id: string): Promise<Checkpoint | null> {
      return db.transaction(async (tx) => {
        const [found] = await tx.select().from(checkpoints).where(eq(checkpoints.id, id));
        if (!found) return null;
        running.forget(found.sandboxId);
        const moved = await tx
          .update(sandboxes)
          .set({ currentCheckpointId: id })
          .where(and(eq(sandboxes.id, found.sandboxId), eq(sandboxes.generation, found.generation), ne(sandboxes.status, 'deleted')))
          .returning({ id: sandboxes.id });
        if (moved.length === 0) return null;
        const [row] = await tx
          .update(checkpoints)
          .set({ attachedAt: sql`coalesce(${checkpoints.attachedAt}, now())` })
          .where(eq(checkpoints.id, id))
          .returning();
        return toCheckpoint(row!);
      });
    },

    /**
     * Makes an attached checkpoint the sandbox's current one again (a restore), fenced on the
     * generation the restore ran at. False when the generation moved on.
     */
    async makeCurrent(id: string, sandboxId: string, generation: number): Promise<boolean> {
      running.forget(sandboxId);
      const moved = await db
        .update(sandboxes)
        .set({ currentCheckpointId: id })
        .where(and(eq(sandboxes.id, sandboxId), eq(sandboxes.generation, generation)))
        .returning({ id: sandboxes.id });
      return moved.length > 0;
    },

    async get(id: string): Promise<Checkpoint | null> {
      const rows = await db.select().from(checkpoints).where(eq(checkpoints.id, id));
      return rows[0] ? toCheckpoint(rows[0]) : null;
    },

    /** A sandbox's attached checkpoints, newest first. */
    async listAttached(sandboxId: string): Promise<Checkpoint[]> {
      const rows = await db
        .select()
        .from(checkpoints)
        .where(and(eq(checkpoints.sandboxId, sandboxId), isNotNull(checkpoints.attachedAt)))
        .orderBy(desc(checkpoints.attachedAt), desc(checkpoints.createdAt), desc(checkpoints.id));
      return rows.map(toCheckpoint);
    },

    /**
     * What retention lets go of: attached checkpoints beyond the newest `keep` (never the
     * sandbox's current one), and unattached ones from an older generation or older than
     * `staleBefore` (fenced out, or left by a server that died between recording and attaching).
     */
    async prunable(sandboxId: string, keep: number, staleBefore: Date): Promise<string[]> {
      const [sandbox] = await db
        .select({ generation: sandboxes.generation, current: sandboxes.currentCheckpointId })
        .from(sandboxes)
        .where(eq(sandboxes.id, sandboxId));
      if (!sandbox) return [];
      const attached = await db
        .select({ id: checkpoints.id })
        .from(checkpoints)
        .where(and(eq(checkpoints.sandboxId, sandboxId), isNotNull(checkpoints.attachedAt)))
        .orderBy(desc(checkpoints.attachedAt), desc(checkpoints.createdAt), desc(checkpoints.id));
      const unattached = await db
        .select({ id: checkpoints.id })
        .from(checkpoints)
        .where(
          and(
            eq(checkpoints.sandboxId, sandboxId),
            isNull(checkpoints.attachedAt),
            or(lt(checkpoints.generation, sandbox.generation), lt(checkpoints.createdAt, staleBefore)),
          ),
        );
      const old = attached
        .slice(keep)
        .map((r) => r.id)
        .filter((id) => id !== sandbox.current);
      return [...old, ...unattached.map((r) => r.id)];
    },

    /** Sandboxes that still hold checkpoints although they are deleted (their checkpoints all go). */
    async deletedWithCheckpoints(): Promise<string[]> {
      const rows = await db
        .selectDistinct({ id: checkpoints.sandboxId })
        .from(checkpoints)
        .innerJoin(sandboxes, eq(sandboxes.id, checkpoints.sandboxId))
        .where(eq(sandboxes.status, 'deleted'));
      return rows.map((r) => r.id);
    },

    /** Every checkpoint id of a sandbox. */
    async idsOf(sandboxId: string): Promise<string[]> {
      const rows = await db.select({ id: checkpoints.id }).from(checkpoints).where(eq(checkpoints.sandboxId, sandboxId));
      return rows.map((r) => r.id);
    },

    /**
     * Deletes checkpoints and drops their references, in one transaction. A blob whose count
     * reaches 0 is not deleted here: `claimUnreferenced` hands it to one collector.
     */
    async release(ids: readonly string[]): Promise<void> {
      if (ids.length === 0) return;
      await db.transaction(async (tx) => {
        // The references go first, each row exactly once: a concurrent release of the same id
        // finds them gone and drops nothing twice.
        const dropped = new Map<string, number>();
        for (const batch of chunked(ids)) {
          const gone = await tx
            .delete(checkpointChunks)
            .where(inArray(checkpointChunks.checkpointId, batch))
            .returning({ digest: checkpointChunks.digest });
          for (const { digest } of gone) dropped.set(digest, (dropped.get(digest) ?? 0) + 1);
          await tx.delete(checkpoints).where(inArray(checkpoints.id, batch));
        }
        for (const batch of chunked([...dropped])) {
          const values = sql.join(
            batch.map(([digest, n]) => sql`(${digest}, ${n}::int)`),
            sql`, `,
          );
          await tx.execute(sql`
            UPDATE checkpoint_blobs AS b SET refs = b.refs - v.n
            FROM (VALUES ${values}) AS v(digest, n)
            WHERE b.digest = v.digest AND b.refs > 0`);
        }
      });
    },

    /**
     * Claims blobs nobody references (refs 0 → -1, compare-and-set): the caller alone deletes
     * them from the blob store, then calls `forget`. A checkpoint recorded meanwhile never counts
     * on a claimed blob.
     */
    async claimUnreferenced(limit = 1000): Promise<string[]> {
      const candidates = db
        .select({ digest: checkpointBlobs.digest })
        .from(checkpointBlobs)
        .where(eq(checkpointBlobs.refs, 0))
        .limit(limit);
      const rows = await db
        .update(checkpointBlobs)
        .set({ refs: -1 })
        .where(and(inArray(checkpointBlobs.digest, candidates), eq(checkpointBlobs.refs, 0)))
        .returning({ digest: checkpointBlobs.digest });
      return rows.map((r) => r.digest);
    },

    /** Blobs claimed by a collector (deleting them, or dead before it finished). */
    async claimed(digests: readonly string[]): Promise<string[]> {
      if (digests.length === 0) return [];
      const rows = await db
        .select({ digest: checkpointBlobs.digest })
        .from(checkpointBlobs)
        .where(and(inArray(checkpointBlobs.digest, [...digests]), eq(checkpointBlobs.refs, -1)));
      return rows.map((r) => r.digest);
    },

    /** Drops the rows of claimed blobs once their bytes are deleted. */
    async forget(digests: readonly string[]): Promise<void> {
      for (const batch of chunked(digests)) {
        await db.delete(checkpointBlobs).where(and(inArray(checkpointBlobs.digest, batch), eq(checkpointBlobs.refs, -1)));
      }
    },

    /** The reference count of a blob (null: no row); for tests and diagnostics. */
    async refsOf(digest: string): Promise<number | null> {
      const rows = await db.select({ refs: checkpointBlobs.refs }).from(checkpointBlobs).where(eq(checkpointBlobs.digest, digest));
      return rows[0]?.refs ?? null;
    },
  };
}
