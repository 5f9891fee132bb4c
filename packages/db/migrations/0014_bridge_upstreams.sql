-- Bridge upstreams: services a sandbox reaches through the host bridge
-- (`/upstreams/<name>/...`), the credential added on the host. `credential` is sealed by the
-- server before it gets here and never leaves it except to the forwarder, decrypted in memory.
CREATE TABLE bridge_upstreams (
  name text PRIMARY KEY,
  base_url text NOT NULL,
  allowed_paths jsonb NOT NULL DEFAULT '[]',
  credential jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
