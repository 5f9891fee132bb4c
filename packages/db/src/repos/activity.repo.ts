import { desc, eq } from 'drizzle-orm';
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
export function activityValues(entry: NewActivity) {
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
