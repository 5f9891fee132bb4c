-- Ports of a sandbox opened as URLs. A row exists while the port is open; closing it deletes the
-- row, and deleting the sandbox's record takes its ports with it.
CREATE TABLE sandbox_ports (
  sandbox_id text NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE,
  port integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
  visibility text NOT NULL CHECK (visibility IN ('private', 'public')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (sandbox_id, port)
);
