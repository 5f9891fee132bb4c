import { type Principal, redact } from '@sandcast/core';
import type { ActivityRecord, NewActivity, Repositories } from '@sandcast/db';

export interface ActivityInput {
  action: string;
  actor: Principal;
  subjectType: string;
  subjectId: string | null;
  details?: Record<string, unknown> | undefined;
  /** Dotted paths inside `details` that are secret, beyond what the redactor finds by name. */
  secretPaths?: readonly string[] | undefined;
}

/**
 * The row an activity input is stored as: the actor reduced to role and key, a bridge request's
 * origin named, the details redacted. The one place that shape is made (recordActivity, and the
 * warm-pool claim that writes its row in the claim's own statement).
 */
export function activityEntry(input: ActivityInput): NewActivity {
  return {
    action: input.action,
    actor: { role: input.actor.role, keyId: input.actor.keyId },
    subjectType: input.subjectType,
    subjectId: input.subjectId,
    // A request from inside a sandbox through the bridge names the sandbox and session that made it.
    details: redact(
      input.actor.bridge ? { ...input.details, viaBridge: { ...input.actor.bridge } } : (input.details ?? {}),
      input.secretPaths,
    ) as Record<string, unknown>,
  };
}

/**
 * Writes an activity row with redacted details. Pass the transaction's repositories so the row
 * commits (or rolls back) with the change it records.
 */
export async function recordActivity(repos: Repositories, input: ActivityInput): Promise<ActivityRecord> {
  return repos.activity.insert(activityEntry(input));
}
