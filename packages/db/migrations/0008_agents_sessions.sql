-- Agents with immutable versions, sessions that pin their primary sandbox, the environment spec
-- (durability, lifecycle, bootstrap, containment), and a sandbox lifecycle that converges:
-- desired/observed status, a generation for fencing, the last activity for the idle policy.

-- The spec beside the provider config. '{}' reads as the defaults (core's DEFAULT_SANDBOX_SPEC).
-- Adding a column fires no UPDATE trigger: revisions stay immutable.
ALTER TABLE environments ADD COLUMN spec jsonb NOT NULL DEFAULT '{}';
ALTER TABLE environment_revisions ADD COLUMN spec jsonb NOT NULL DEFAULT '{}';

-- `paused` becomes `stopped`: the compute is stopped, its disk kept.
ALTER TABLE sandboxes DROP CONSTRAINT sandboxes_desired_status_check;
ALTER TABLE sandboxes DROP CONSTRAINT sandboxes_status_check;
UPDATE sandboxes SET desired_status = 'stopped' WHERE desired_status = 'paused';
UPDATE sandboxes SET status = 'stopped' WHERE status = 'paused';
ALTER TABLE sandboxes ADD CONSTRAINT sandboxes_desired_status_check CHECK (desired_status IN ('ready', 'stopped', 'deleted'));
ALTER TABLE sandboxes ADD CONSTRAINT sandboxes_status_check
  CHECK (status IN ('starting', 'running', 'stopped', 'lost', 'failed', 'deleted'));

CREATE TABLE agents (
  id text PRIMARY KEY,
  name text NOT NULL,
  display_name text,
  description text,
  current_version_id text NOT NULL,
  archived_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX agents_name_key ON agents (name);

CREATE TABLE agent_versions (
  id text PRIMARY KEY,
  agent_id text NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  number integer NOT NULL CHECK (number >= 1),
  sandbox_policy jsonb NOT NULL,
  capabilities jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX agent_versions_number_key ON agent_versions (agent_id, number);
-- Sessions pin a version: nobody may rewrite it.
CREATE TRIGGER agent_versions_immutable BEFORE UPDATE ON agent_versions
  FOR EACH ROW EXECUTE FUNCTION sandcast_refuse_update();

CREATE TABLE sessions (
  id text PRIMARY KEY,
  agent_id text NOT NULL REFERENCES agents (id),
  agent_version_id text NOT NULL REFERENCES agent_versions (id),
  status text NOT NULL CHECK (status IN ('active', 'ended')),
  primary_sandbox_id text,
  binding_name text,
  created_by_role text NOT NULL,
  created_by_key_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz
);
CREATE INDEX sessions_created_at_idx ON sessions (created_at DESC);
CREATE INDEX sessions_key_idx ON sessions (created_by_key_id);

ALTER TABLE sandboxes ADD COLUMN session_id text REFERENCES sessions (id) ON DELETE SET NULL;
ALTER TABLE sandboxes ADD COLUMN binding_name text;
ALTER TABLE sandboxes ADD COLUMN spec jsonb NOT NULL DEFAULT '{}';
ALTER TABLE sandboxes ADD COLUMN config_overrides jsonb NOT NULL DEFAULT '{}';
ALTER TABLE sandboxes ADD COLUMN generation integer NOT NULL DEFAULT 1 CHECK (generation >= 1);
ALTER TABLE sandboxes ADD COLUMN last_activity_at timestamptz NOT NULL DEFAULT now();
-- What the reconciler looks at: every sandbox not yet deleted.
CREATE INDEX sandboxes_live_idx ON sandboxes (status) WHERE status <> 'deleted';

-- Which agents an agent key may start sessions for (admin-managed); admin keys ignore it.
ALTER TABLE api_keys ADD COLUMN allowed_agent_ids jsonb NOT NULL DEFAULT '[]';

-- Leases for work only one server may do at a time (the reconciler), on Postgres and PGlite alike.
CREATE TABLE leader_leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
);
