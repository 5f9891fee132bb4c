import type {
  AgentCapability,
  BootSource,
  CheckpointTrigger,
  CustomImageKind,
  CustomImageStatus,
  FleetReservation,
  SandboxDesiredStatus,
  SandboxPolicy,
  SandboxSource,
  SandboxStatus,
  SessionStatus,
  SetupSessionStatus,
} from '@sandcast/core';
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

// The tables as drizzle sees them. The SQL in ../migrations is the source of truth for the
// database; these declarations must match it (the repository tests run against both).

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

export const instanceSettings = pgTable('instance_settings', {
  id: integer('id').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

export const providerConnections = pgTable(
  'provider_connections',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    provider: text('provider').notNull(),
    config: jsonb('config').$type<Record<string, unknown>>().notNull().default({}),
    secrets: jsonb('secrets').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('provider_connections_name_key').on(t.name)],
);

/** Bridge upstreams; `credential` is sealed by the server before it gets here. */
export const bridgeUpstreams = pgTable('bridge_upstreams', {
  name: text('name').primaryKey(),
  baseUrl: text('base_url').notNull(),
  allowedPaths: jsonb('allowed_paths').$type<string[]>().notNull().default([]),
  credential: jsonb('credential').$type<Record<string, unknown>>().notNull(),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

export const environments = pgTable(
  'environments',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    provider: text('provider').notNull(),
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    /** The stored spec; fields it lacks read as the defaults. */
    spec: jsonb('spec').$type<Record<string, unknown>>().notNull().default({}),
    currentRevisionId: text('current_revision_id').notNull(),
    /** The provider connection its sandboxes use (connected providers), or null. */
    connectionId: text('connection_id').references(() => providerConnections.id, { onDelete: 'restrict' }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('environments_name_key').on(t.name)],
);

export const environmentRevisions = pgTable(
  'environment_revisions',
  {
    id: text('id').primaryKey(),
    environmentId: text('environment_id')
      .notNull()
      .references(() => environments.id, { onDelete: 'cascade' }),
    number: integer('number').notNull(),
    provider: text('provider').notNull(),
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    spec: jsonb('spec').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('environment_revisions_number_key').on(t.environmentId, t.number), check('number_positive', sql`${t.number} >= 1`)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    role: text('role').$type<'admin' | 'agent'>().notNull(),
    keyHash: text('key_hash').notNull(),
    prefix: text('prefix').notNull(),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    /** Agents an agent key may start sessions for. */
    allowedAgentIds: jsonb('allowed_agent_ids').$type<string[]>().notNull().default([]),
  },
  (t) => [uniqueIndex('api_keys_hash_key').on(t.keyHash)],
);

export const activity = pgTable(
  'activity',
  {
    id: text('id').primaryKey(),
    action: text('action').notNull(),
    actorRole: text('actor_role').notNull(),
    actorKeyId: text('actor_key_id'),
    subjectType: text('subject_type').notNull(),
    subjectId: text('subject_id'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
    /** Insertion order: rows of the same instant keep the order they were written in. */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
  },
  (t) => [index('activity_created_at_idx').on(t.createdAt, t.id), index('activity_seq_idx').on(t.seq)],
);

export const setupSessions = pgTable('environment_custom_image_setup_sessions', {
  id: text('id').primaryKey(),
  environmentId: text('environment_id')
    .notNull()
    .references(() => environments.id, { onDelete: 'cascade' }),
  environmentRevisionId: text('environment_revision_id').notNull(),
  provider: text('provider').notNull(),
  status: text('status').$type<SetupSessionStatus>().notNull(),
  sourceTemplateId: text('source_template_id'),
  providerLeaseId: text('provider_lease_id'),
  connectionSummary: jsonb('connection_summary').$type<Record<string, unknown>>().notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
  failureReason: text('failure_reason'),
  createdByKeyId: text('created_by_key_id'),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

export const customImageTemplates = pgTable('environment_custom_image_templates', {
  id: text('id').primaryKey(),
  environmentId: text('environment_id')
    .notNull()
    .references(() => environments.id, { onDelete: 'cascade' }),
  provider: text('provider').notNull(),
  kind: text('kind').$type<CustomImageKind>().notNull(),
  providerRef: text('provider_ref'),
  digest: text('digest'),
  sizeBytes: bigint('size_bytes', { mode: 'number' }),
  status: text('status').$type<CustomImageStatus>().notNull(),
  refreshedFromTemplateId: text('refreshed_from_template_id'),
  setupSessionId: text('setup_session_id'),
  capturedRevisionId: text('captured_revision_id').notNull(),
  capturedFingerprint: text('captured_fingerprint').notNull(),
  linkedRevisionId: text('linked_revision_id').notNull(),
  linkedFingerprint: text('linked_fingerprint').notNull(),
  linkedBootSource: jsonb('linked_boot_source').$type<BootSource>().notNull(),
  metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull(),
  failureReason: text('failure_reason'),
  capturedAt: timestamp('captured_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
  supersededByTemplateId: text('superseded_by_template_id'),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

export const sandboxes = pgTable('sandboxes', {
  id: text('id').primaryKey(),
  environmentId: text('environment_id').references(() => environments.id, { onDelete: 'set null' }),
  environmentRevisionId: text('environment_revision_id').notNull(),
  imageId: text('image_id'),
  provider: text('provider').notNull(),
  providerInstanceId: text('provider_instance_id'),
  desiredStatus: text('desired_status').$type<SandboxDesiredStatus>().notNull(),
  status: text('status').$type<SandboxStatus>().notNull(),
  failureReason: text('failure_reason'),
  sessionId: text('session_id'),
  bindingName: text('binding_name'),
  logicalId: text('logical_id'),
  reservation: jsonb('reservation').$type<FleetReservation>(),
  spec: jsonb('spec').$type<Record<string, unknown>>().notNull().default({}),
  configOverrides: jsonb('config_overrides').$type<Record<string, unknown>>().notNull().default({}),
  generation: integer('generation').notNull().default(1),
  currentCheckpointId: text('current_checkpoint_id'),
  lastActivityAt: timestamp('last_activity_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  createdByRole: text('created_by_role').notNull(),
  createdByKeyId: text('created_by_key_id'),
  source: text('source').$type<SandboxSource>().notNull().default('cold'),
  /** True while it waits, unclaimed, in its environment's warm pool. */
  pooled: boolean('pooled').notNull().default(false),
  forkedFromId: text('forked_from_id'),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/** What the reconciler last saw filling an environment's warm pool. */
export const warmPools = pgTable('warm_pools', {
  environmentId: text('environment_id')
    .primaryKey()
    .references(() => environments.id, { onDelete: 'cascade' }),
  lastRefillError: text('last_refill_error'),
  lastRefillAt: timestamp('last_refill_at', { withTimezone: true, mode: 'date' }),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

export const agents = pgTable(
  'agents',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    displayName: text('display_name'),
    description: text('description'),
    currentVersionId: text('current_version_id').notNull(),
    archivedAt: timestamp('archived_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('agents_name_key').on(t.name)],
);

/** Immutable: a trigger refuses updates. */
export const agentVersions = pgTable(
  'agent_versions',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    number: integer('number').notNull(),
    sandboxPolicy: jsonb('sandbox_policy').$type<SandboxPolicy>().notNull(),
    capabilities: jsonb('capabilities').$type<AgentCapability[]>().notNull().default([]),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('agent_versions_number_key').on(t.agentId, t.number)],
);

export const sessions = pgTable('sessions', {
  id: text('id').primaryKey(),
  agentId: text('agent_id')
    .notNull()
    .references(() => agents.id),
  agentVersionId: text('agent_version_id')
    .notNull()
    .references(() => agentVersions.id),
  status: text('status').$type<SessionStatus>().notNull(),
  primarySandboxId: text('primary_sandbox_id'),
  bindingName: text('binding_name'),
  createdByRole: text('created_by_role').notNull(),
  createdByKeyId: text('created_by_key_id'),
  createdAt: createdAt(),
  endedAt: timestamp('ended_at', { withTimezone: true, mode: 'date' }),
  fleetSerial: integer('fleet_serial').notNull().default(0),
});

/** Work only one server may do at a time; a holder keeps its lease by renewing it before it expires. */
export const leaderLeases = pgTable('leader_leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
});

/**
 * Open ports of one kind of owner (a sandbox, a setup session), one table per owner so each
 * cascades with it; a row exists while the port is open. The same columns, so one repository
 * serves both.
 */
function portsTable(name: string, ownerColumn: string, owner: () => AnyPgColumn) {
  return pgTable(
    name,
    {
      ownerId: text(ownerColumn).notNull().references(owner, { onDelete: 'cascade' }),
      port: integer('port').notNull(),
      visibility: text('visibility').$type<'private' | 'public'>().notNull(),
      createdAt: createdAt(),
    },
    (t) => [primaryKey({ columns: [t.ownerId, t.port] })],
  );
}
export type PortsTable = ReturnType<typeof portsTable>;

export const sandboxPorts = portsTable('sandbox_ports', 'sandbox_id', () => sandboxes.id);
export const setupSessionPorts = portsTable('setup_session_ports', 'setup_session_id', () => setupSessions.id);

/** Web UI sessions (authenticated mode): the cookie token is stored only as a hash. */
export const uiSessions = pgTable(
  'ui_sessions',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull(),
    apiKeyId: text('api_key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [uniqueIndex('ui_sessions_token_hash_key').on(t.tokenHash), index('ui_sessions_expires_at_idx').on(t.expiresAt)],
);

/** Browser terminals of setup sessions; the connect token is stored only as a hash. */
export const terminalSessions = pgTable('terminal_sessions', {
  id: text('id').primaryKey(),
  /** Exactly one of setupSessionId and sandboxId is set (a CHECK in 0009). */
  setupSessionId: text('setup_session_id').references(() => setupSessions.id, { onDelete: 'cascade' }),
  sandboxId: text('sandbox_id').references(() => sandboxes.id, { onDelete: 'cascade' }),
  tokenHash: text('token_hash').notNull(),
  connectionType: text('connection_type').$type<'pty' | 'ssh'>().notNull(),
  connectExpiresAt: timestamp('connect_expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  /** Null for a sandbox terminal: it ends with the sandbox. */
  sessionExpiresAt: timestamp('session_expires_at', { withTimezone: true, mode: 'date' }),
  consumedAt: timestamp('consumed_at', { withTimezone: true, mode: 'date' }),
  closedAt: timestamp('closed_at', { withTimezone: true, mode: 'date' }),
  closeReason: text('close_reason'),
  createdByKeyId: text('created_by_key_id'),
  createdAt: createdAt(),
});

/** SSH host keys pinned on first use, per setup session and endpoint. */
export const terminalHostKeyPins = pgTable('terminal_host_key_pins', {
  setupSessionId: text('setup_session_id').notNull(),
  host: text('host').notNull(),
  port: integer('port').notNull(),
  fingerprint: text('fingerprint').notNull(),
  pinnedAt: timestamp('pinned_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/** The SSH gateway's per-setup-session credentials, stored only as hashes. */
export const sshGatewayCredentials = pgTable('ssh_gateway_credentials', {
  id: text('id').primaryKey(),
  setupSessionId: text('setup_session_id')
    .notNull()
    .references(() => setupSessions.id, { onDelete: 'cascade' }),
  credentialHash: text('credential_hash').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  createdAt: createdAt(),
});

export const checkpoints = pgTable(
  'checkpoints',
  {
    id: text('id').primaryKey(),
    sandboxId: text('sandbox_id')
      .notNull()
      .references(() => sandboxes.id, { onDelete: 'cascade' }),
    generation: integer('generation').notNull(),
    manifestDigest: text('manifest_digest').notNull(),
    storedBytes: bigint('stored_bytes', { mode: 'number' }).notNull(),
    totalBytes: bigint('total_bytes', { mode: 'number' }).notNull(),
    fileCount: integer('file_count').notNull(),
    changedPaths: integer('changed_paths').notNull(),
    trigger: text('trigger').$type<CheckpointTrigger>().notNull(),
    attachedAt: timestamp('attached_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [index('checkpoints_sandbox_idx').on(t.sandboxId, t.createdAt.desc())],
);

export const checkpointChunks = pgTable(
  'checkpoint_chunks',
  {
    checkpointId: text('checkpoint_id')
      .notNull()
      .references(() => checkpoints.id, { onDelete: 'cascade' }),
    digest: text('digest').notNull(),
  },
  (t) => [primaryKey({ columns: [t.checkpointId, t.digest] }), index('checkpoint_chunks_digest_idx').on(t.digest)],
);

export const checkpointBlobs = pgTable('checkpoint_blobs', {
  digest: text('digest').primaryKey(),
  refs: integer('refs').notNull(),
});

export const schema = {
  instanceSettings,
  environments,
  environmentRevisions,
  apiKeys,
  activity,
  setupSessions,
  customImageTemplates,
  sandboxes,
  warmPools,
  sandboxPorts,
  setupSessionPorts,
  agents,
  agentVersions,
  sessions,
  leaderLeases,
  terminalSessions,
  terminalHostKeyPins,
  sshGatewayCredentials,
  uiSessions,
  checkpoints,
  checkpointChunks,
  checkpointBlobs,
};
export type Schema = typeof schema;
