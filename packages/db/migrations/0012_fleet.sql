-- Resource sandboxes ("the fleet"): sandboxes of a session beside its primary one. `logical_id`
-- (`rsb_…`) is how the session addresses one — unique within the session, never the sandbox id
-- or the provider's —, and `reservation` ({cpu, memoryMb}) what it counts against the session's
-- fleet limits. Both are null for primary and plain sandboxes.
--
-- `sessions.fleet_serial` is bumped first in every resource sandbox creation's transaction: on
-- Postgres the row it writes serialises creations in one session, so the limits are checked
-- against every committed sibling (PGlite has one connection and serialises anyway).
ALTER TABLE sandboxes ADD COLUMN logical_id text;
ALTER TABLE sandboxes ADD COLUMN reservation jsonb;
CREATE UNIQUE INDEX sandboxes_session_logical_id_key ON sandboxes (session_id, logical_id) WHERE logical_id IS NOT NULL;
ALTER TABLE sessions ADD COLUMN fleet_serial integer NOT NULL DEFAULT 0;
