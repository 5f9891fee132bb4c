import { type ErrorCode, ErrorEnvelopeSchema } from '@sandcast/contracts';

/**
 * What `SandcastApiError.code` can be: a code of the server's closed set (docs/spec/errors.md), or
 * `http_error` for an answer that carries no Sandcast error envelope (a proxy's page, a cut-off
 * stream, a server newer than this client). Switch on it exhaustively.
 */
export type SandcastApiErrorCode = ErrorCode | 'http_error';

/** An error answer from the Sandcast API: match on `code`, show `message` to people. */
export class SandcastApiError extends Error {
  readonly status: number;
  readonly code: SandcastApiErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(options: {
    status: number;
    code: SandcastApiErrorCode;
    message: string;
    details?: Record<string, unknown> | undefined;
  }) {
    super(options.message);
    this.name = 'SandcastApiError';
    this.status = options.status;
    this.code = options.code;
    this.details = options.details;
  }
}

/** The error an unsuccessful answer stands for: its envelope when it has one, else `http_error`. */
export function apiErrorFromAnswer(status: number, text: string): SandcastApiError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const envelope = ErrorEnvelopeSchema.safeParse(json);
  if (envelope.success) return new SandcastApiError({ status, ...envelope.data.error });
  return new SandcastApiError({ status, code: 'http_error', message: `HTTP ${status}: ${text.slice(0, 200)}` });
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
