-- A browser terminal attaches to a setup session's sandbox or to a session's primary sandbox:
-- exactly one of the two is named. A sandbox terminal has no expiry of its own (it ends with the
-- sandbox), so session_expires_at is null for it.
ALTER TABLE terminal_sessions ALTER COLUMN setup_session_id DROP NOT NULL;
ALTER TABLE terminal_sessions ALTER COLUMN session_expires_at DROP NOT NULL;
ALTER TABLE terminal_sessions ADD COLUMN sandbox_id text REFERENCES sandboxes (id) ON DELETE CASCADE;
ALTER TABLE terminal_sessions ADD CONSTRAINT terminal_sessions_one_target_check
  CHECK ((setup_session_id IS NULL) <> (sandbox_id IS NULL));
CREATE INDEX terminal_sessions_sandbox_idx ON terminal_sessions (sandbox_id);
