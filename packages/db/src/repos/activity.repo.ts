import { desc, eq, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../connect.ts';
import { newId } from '../ids.ts';
import { activity } from '../schema.ts';

export interface NewActivity {
  action: string;
  actor: { role: string; keyId: string | null };
  subjectType: string;
  subjectId: string | null;
  /** Must already be redacted: the repository stores what it gets. */
  details: Record<string, unknown>;
}

export interface ActivityRecord extends NewActivity {
  id: string;
  createdAt: string;
}

/** The row an entry is stored as, with a new id: the one mapping of an entry onto the table. */
function activityValues(entry: NewActivity) {
  return {
    id: newId('act'),
    action: entry.action,
    actorRole: entry.actor.role,
    actorKeyId: entry.actor.keyId,
    subjectType: entry.subjectType,
    subjectId: entry.subjectId,
    details: entry.details,
  };
}

/**
 * The activity row of `entry` whose subject is the row a data-modifying CTE named `source` wrote
 * (`WITH source AS (… RETURNING id)`), as the body of a further CTE: a change and its record in one
 * statement, written only when the change wrote a row.
 */
export function activityFrom(source: 'claimed' | 'inserted', entry: Omit<NewActivity, 'subjectId'>): SQL {
  const row = activityValues({ ...entry, subjectId: null });
  return sql`
    INSERT INTO activity (id, action, actor_role, actor_key_id, subject_type, subject_id, details)
    SELECT ${row.id}, ${row.action}, ${row.actorRole}, ${row.actorKeyId}::text, ${row.subjectType}, ${sql.identifier(source)}.id,
      ${JSON.stringify(row.details)}::jsonb
    FROM ${sql.identifier(source)}
    RETURNING id`;
}

/** The append-only activity log. */
export function createActivityRepo(db: Db) {
  return {
    async insert(entry: NewActivity): Promise<ActivityRecord> {
      const [row] = await db.insert(activity).values(activityValues(entry)).returning();
      return { ...entry, id: row!.id, createdAt: row!.createdAt.toISOString() };
    },
    /** Newest first. */
    async list(options: { limit: number; action?: string | undefined }): Promise<ActivityRecord[]> {
      const query = db.select().from(activity);
      const rows = await (options.action ? query.where(eq(activity.action, options.action)) : query)
        .orderBy(desc(activity.seq))
        .limit(options.limit);
      return rows.map((row) => ({
        id: row.id,
        action: row.action,
        actor: { role: row.actorRole, keyId: row.actorKeyId },
        subjectType: row.subjectType,
        subjectId: row.subjectId,
        details: row.details,
        createdAt: row.createdAt.toISOString(),
      }));
    },
  };
}
