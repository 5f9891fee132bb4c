/** An error answer from the Sandcast API: match on `code`, show `message` to people. */
export class SandcastApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;

  constructor(options: { status: number; code: string; message: string; details?: Record<string, unknown> | undefined }) {
    super(options.message);
    this.name = 'SandcastApiError';
    this.status = options.status;
    this.code = options.code;
    this.details = options.details;
  }
}

/** The server could not be reached at all. */
export class SandcastConnectionError extends Error {
  constructor(baseUrl: string, cause: unknown) {
    super(`cannot reach Sandcast at ${baseUrl}: ${(cause as Error)?.message ?? String(cause)}. Is the server running (sandcast start)?`, {
      cause,
    });
    this.name = 'SandcastConnectionError';
  }
}
