-- Warm pools and forks. A pool member is an ordinary sandbox row with `pooled` true: booted from
-- its environment's current revision and boot image, owned by nobody until a claim (one
-- compare-and-set) hands it out and sets `pooled` false and `source` 'warm_pool'. `source` says
-- how every sandbox came to be ('cold', 'warm_pool', 'fork'); a fork names its source.
-- `warm_pools` keeps what the reconciler last saw when it filled an environment's pool.
ALTER TABLE sandboxes ADD COLUMN source text NOT NULL DEFAULT 'cold';
ALTER TABLE sandboxes ADD COLUMN pooled boolean NOT NULL DEFAULT false;
ALTER TABLE sandboxes ADD COLUMN forked_from_id text;
CREATE INDEX sandboxes_pooled_idx ON sandboxes (environment_id, created_at) WHERE pooled;

CREATE TABLE warm_pools (
  environment_id text PRIMARY KEY REFERENCES environments (id) ON DELETE CASCADE,
  last_refill_error text,
  last_refill_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
