-- Provider connections: the accounts connected providers (Daytona) run sandboxes in. `config`
-- holds the non-secret settings; every value of `secrets` is sealed by the server before it gets
-- here. An environment names the connection its sandboxes use; a connection in use cannot be
-- deleted (the service names the environments; the foreign key is the backstop).
CREATE TABLE provider_connections (
  id text PRIMARY KEY,
  name text NOT NULL,
  provider text NOT NULL,
  config jsonb NOT NULL DEFAULT '{}',
  secrets jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX provider_connections_name_key ON provider_connections (name);

ALTER TABLE environments ADD COLUMN connection_id text REFERENCES provider_connections (id) ON DELETE RESTRICT;
CREATE INDEX environments_connection_id_idx ON environments (connection_id);
