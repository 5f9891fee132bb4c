-- Browser terminals of setup sessions and the SSH gateway's credentials. Only hashes of the
-- secrets are stored; consumption and pinning are compare-and-set, so they hold across restarts
-- and across replicas.

CREATE TABLE terminal_sessions (
  id text PRIMARY KEY,
  setup_session_id text NOT NULL REFERENCES environment_custom_image_setup_sessions (id) ON DELETE CASCADE,
  -- SHA-256 (hex) of the single-use connect token.
  token_hash text NOT NULL,
  connection_type text NOT NULL CHECK (connection_type IN ('pty', 'ssh')),
  -- The token connects only before this instant: min(5 minutes, setup expiry, payload expiry).
  connect_expires_at timestamptz NOT NULL,
  -- An attached terminal lives at most until the setup session expires.
  session_expires_at timestamptz NOT NULL,
  -- Set once, by the connection that used the token (or when a token was seen in a URL).
  consumed_at timestamptz,
  closed_at timestamptz,
  close_reason text,
  created_by_key_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (connect_expires_at <= session_expires_at)
);
CREATE UNIQUE INDEX terminal_sessions_token_hash_key ON terminal_sessions (token_hash);
CREATE INDEX terminal_sessions_setup_session_idx ON terminal_sessions (setup_session_id);

-- Host keys of SSH endpoints that terminals attached to, pinned on first use for the setup
-- session's lifetime. The primary key makes the first pin win a race.
CREATE TABLE terminal_host_key_pins (
  setup_session_id text NOT NULL REFERENCES environment_custom_image_setup_sessions (id) ON DELETE CASCADE,
  host text NOT NULL,
  port integer NOT NULL,
  -- "SHA256:<base64>" as OpenSSH prints it.
  fingerprint text NOT NULL,
  pinned_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (setup_session_id, host, port)
);

-- The SSH gateway's usernames: one fresh credential per setup session, stored as a hash.
CREATE TABLE ssh_gateway_credentials (
  id text PRIMARY KEY,
  setup_session_id text NOT NULL REFERENCES environment_custom_image_setup_sessions (id) ON DELETE CASCADE,
  credential_hash text NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX ssh_gateway_credentials_hash_key ON ssh_gateway_credentials (credential_hash);
CREATE INDEX ssh_gateway_credentials_setup_session_idx ON ssh_gateway_credentials (setup_session_id);
