import { SandcastApiError, type SandcastApiErrorCode, SandcastConnectionError } from '@sandcast/client';
import type { FieldIssue } from '@sandcast/contracts';

/** What to show people for a failed request: the API's own message, which says what to do next. */
export function errorMessage(error: unknown): string {
  if (error instanceof SandcastApiError) return error.message;
  if (error instanceof SandcastConnectionError) return 'Cannot reach the Sandcast server. Check that it is running, then retry.';
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The API's error code, for matching (never match on message text). */
export function errorCode(error: unknown): SandcastApiErrorCode | null {
  return error instanceof SandcastApiError ? error.code : null;
}

/**
 * The API's per-field messages of a `validation_failed` error, by field path relative to
 * `under` ("config.image" → "image" with under "config"). Empty for any other error.
 */
export function fieldErrors(error: unknown, under = ''): Record<string, string> {
  const issues = errorDetails(error)?.issues;
  if (!Array.isArray(issues)) return {};
  const prefix = under ? `${under}.` : '';
  const out: Record<string, string> = {};
  for (const issue of issues as FieldIssue[]) {
    if (typeof issue?.path !== 'string' || typeof issue.message !== 'string') continue;
    const path = prefix && issue.path.startsWith(prefix) ? issue.path.slice(prefix.length) : prefix ? null : issue.path;
    if (path !== null && !(path in out)) out[path] = issue.message;
  }
  return out;
}

export function errorDetails(error: unknown): Record<string, unknown> | undefined {
  return error instanceof SandcastApiError ? error.details : undefined;
}
