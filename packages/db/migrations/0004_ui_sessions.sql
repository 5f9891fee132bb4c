-- Browser sessions of the web UI in authenticated mode. The cookie holds a random token; only its
-- SHA-256 hash is stored. A session acts with the role of the API key it was opened with, so
-- revoking the key ends its sessions too.

CREATE TABLE ui_sessions (
  id text PRIMARY KEY,
  token_hash text NOT NULL,
  api_key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  CHECK (expires_at > created_at)
);
CREATE UNIQUE INDEX ui_sessions_token_hash_key ON ui_sessions (token_hash);
CREATE INDEX ui_sessions_expires_at_idx ON ui_sessions (expires_at);
