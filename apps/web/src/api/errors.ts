import { SandcastApiError, type SandcastApiErrorCode, SandcastConnectionError } from '@sandcast/client';

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

export function errorDetails(error: unknown): Record<string, unknown> | undefined {
  return error instanceof SandcastApiError ? error.details : undefined;
}
