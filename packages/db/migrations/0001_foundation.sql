-- Foundation: instance settings, environments and their immutable revisions, API keys, activity.

CREATE TABLE instance_settings (
  id integer PRIMARY KEY CHECK (id = 1),
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE environments (
  id text PRIMARY KEY,
  name text NOT NULL,
  provider text NOT NULL,
  config jsonb NOT NULL,
  current_revision_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX environments_name_key ON environments (name);

CREATE TABLE environment_revisions (
  id text PRIMARY KEY,
  environment_id text NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
  number integer NOT NULL CHECK (number >= 1),
  provider text NOT NULL,
  config jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX environment_revisions_number_key ON environment_revisions (environment_id, number);

-- A revision is immutable: sessions pin it, so nobody may rewrite it.
CREATE FUNCTION sandcast_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'rows of % are immutable', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
CREATE TRIGGER environment_revisions_immutable BEFORE UPDATE ON environment_revisions
  FOR EACH ROW EXECUTE FUNCTION sandcast_refuse_update();

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  name text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'agent')),
  key_hash text NOT NULL,
  prefix text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE UNIQUE INDEX api_keys_hash_key ON api_keys (key_hash);

CREATE TABLE activity (
  id text PRIMARY KEY,
  action text NOT NULL,
  actor_role text NOT NULL,
  actor_key_id text,
  subject_type text NOT NULL,
  subject_id text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX activity_created_at_idx ON activity (created_at DESC, id DESC);
