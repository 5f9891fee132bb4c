import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

// The tables as drizzle sees them. The SQL in ../migrations is the source of truth for the
// database; these declarations must match it (the repository tests run against both).

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

export const instanceSettings = pgTable('instance_settings', {
  id: integer('id').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

export const environments = pgTable(
  'environments',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    provider: text('provider').notNull(),
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    currentRevisionId: text('current_revision_id').notNull(),
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
  },
  (t) => [index('activity_created_at_idx').on(t.createdAt, t.id)],
);

export const schema = { instanceSettings, environments, environmentRevisions, apiKeys, activity };
export type Schema = typeof schema;
