-- Ports of a setup session's sandbox opened as URLs, kept apart from sandbox_ports so each table
-- cascades with its own owner: ending the session deletes the rows, deleting it takes them too.
CREATE TABLE setup_session_ports (
  setup_session_id text NOT NULL REFERENCES environment_custom_image_setup_sessions(id) ON DELETE CASCADE,
  port integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
  visibility text NOT NULL CHECK (visibility IN ('private', 'public')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (setup_session_id, port)
);
