-- Custom images (templates), the setup sessions that make them, and sandboxes that boot from them.

CREATE TABLE environment_custom_image_setup_sessions (
  id text PRIMARY KEY,
  environment_id text NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
  environment_revision_id text NOT NULL,
  provider text NOT NULL,
  status text NOT NULL CHECK (status IN ('starting', 'waiting_for_user', 'capturing', 'promoted', 'cancelled', 'timed_out', 'failed')),
  source_template_id text,
  provider_lease_id text,
  connection_summary jsonb NOT NULL DEFAULT '{}'::jsonb,
  expires_at timestamptz NOT NULL,
  finished_at timestamptz,
  failure_reason text,
  created_by_key_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- At most one session holds an environment's setup slot.
CREATE UNIQUE INDEX setup_sessions_one_active_per_environment
  ON environment_custom_image_setup_sessions (environment_id)
  WHERE status IN ('starting', 'waiting_for_user', 'capturing');
CREATE INDEX setup_sessions_environment_idx ON environment_custom_image_setup_sessions (environment_id, created_at DESC);

CREATE TABLE environment_custom_image_templates (
  id text PRIMARY KEY,
  environment_id text NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
  provider text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('snapshot', 'image', 'provider_template')),
  provider_ref text,
  digest text,
  size_bytes bigint,
  status text NOT NULL CHECK (status IN ('active', 'superseded', 'revoked', 'failed')),
  refreshed_from_template_id text,
  setup_session_id text,
  captured_revision_id text NOT NULL,
  captured_fingerprint text NOT NULL,
  linked_revision_id text NOT NULL,
  linked_fingerprint text NOT NULL,
  linked_boot_source jsonb NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  failure_reason text,
  captured_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  superseded_by_template_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (status = 'failed' OR provider_ref IS NOT NULL)
);
-- At most one active image per environment.
CREATE UNIQUE INDEX templates_one_active_per_environment
  ON environment_custom_image_templates (environment_id)
  WHERE status = 'active';
CREATE INDEX templates_environment_idx ON environment_custom_image_templates (environment_id, created_at DESC);

-- What an image is and where it came from never changes; only status and links move.
CREATE FUNCTION sandcast_template_identity_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.environment_id IS DISTINCT FROM OLD.environment_id
     OR NEW.provider IS DISTINCT FROM OLD.provider
     OR NEW.kind IS DISTINCT FROM OLD.kind
     OR NEW.provider_ref IS DISTINCT FROM OLD.provider_ref
     OR NEW.setup_session_id IS DISTINCT FROM OLD.setup_session_id
     OR NEW.refreshed_from_template_id IS DISTINCT FROM OLD.refreshed_from_template_id
     OR NEW.captured_revision_id IS DISTINCT FROM OLD.captured_revision_id
     OR NEW.captured_fingerprint IS DISTINCT FROM OLD.captured_fingerprint
     OR NEW.captured_at IS DISTINCT FROM OLD.captured_at THEN
    RAISE EXCEPTION 'the identity fields of custom image % are immutable', OLD.id USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER templates_identity_immutable BEFORE UPDATE ON environment_custom_image_templates
  FOR EACH ROW EXECUTE FUNCTION sandcast_template_identity_immutable();

CREATE TABLE sandboxes (
  id text PRIMARY KEY,
  environment_id text REFERENCES environments (id) ON DELETE SET NULL,
  environment_revision_id text NOT NULL,
  image_id text,
  provider text NOT NULL,
  provider_instance_id text,
  desired_status text NOT NULL CHECK (desired_status IN ('ready', 'paused', 'deleted')),
  status text NOT NULL CHECK (status IN ('starting', 'running', 'paused', 'lost', 'failed', 'deleted')),
  failure_reason text,
  created_by_role text NOT NULL,
  created_by_key_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sandboxes_created_at_idx ON sandboxes (created_at DESC);
