-- Checkpoints of a sandbox's workspace (durability `checkpointed`) and the reference counts that
-- let unreferenced chunks be deleted from the blob store.

CREATE TABLE checkpoints (
  id text PRIMARY KEY,
  sandbox_id text NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
  -- The sandbox generation whose compute was captured; only that generation may attach it.
  generation integer NOT NULL CHECK (generation >= 1),
  manifest_digest text NOT NULL,
  stored_bytes bigint NOT NULL CHECK (stored_bytes >= 0),
  total_bytes bigint NOT NULL CHECK (total_bytes >= 0),
  file_count integer NOT NULL CHECK (file_count >= 0),
  changed_paths integer NOT NULL CHECK (changed_paths >= 0),
  trigger text NOT NULL CHECK (trigger IN ('auto', 'manual', 'idle')),
  -- Null until the compare-and-set on the sandbox's generation attached it.
  attached_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX checkpoints_sandbox_idx ON checkpoints (sandbox_id, created_at DESC);

-- Which blobs (chunks and the manifest) each checkpoint references, once per digest.
CREATE TABLE checkpoint_chunks (
  checkpoint_id text NOT NULL REFERENCES checkpoints (id) ON DELETE CASCADE,
  digest text NOT NULL,
  PRIMARY KEY (checkpoint_id, digest)
);
CREATE INDEX checkpoint_chunks_digest_idx ON checkpoint_chunks (digest);

-- How many checkpoints reference each blob. -1 means a collector claimed it (refs were 0) and is
-- deleting the blob: a checkpoint being recorded never increments a claimed row, it waits and
-- stores the blob again. Claims and increments are compare-and-set updates, no row locks.
CREATE TABLE checkpoint_blobs (
  digest text PRIMARY KEY,
  refs integer NOT NULL CHECK (refs >= -1)
);
CREATE INDEX checkpoint_blobs_unreferenced_idx ON checkpoint_blobs (refs) WHERE refs <= 0;

-- The last attached checkpoint: what a recovery restores. Written only in a compare-and-set on the
-- generation, so compute that was fenced out never moves it.
ALTER TABLE sandboxes ADD COLUMN current_checkpoint_id text;
