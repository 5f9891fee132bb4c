/**
 * The closed set of error codes Sandcast answers with. Every code is documented in
 * docs/spec/errors.md; clients match on the code, never on the message.
 */
export const ERROR_CODES = [
  'bad_request',
  'validation_failed',
  'unauthorized',
  'forbidden',
  'feature_disabled',
  'host_not_allowed',
  'not_found',
  'conflict',
  'invalid_transition',
  'payload_too_large',
  'unsupported_media_type',
  'not_acceptable',
  'method_not_allowed',
  'capability_unsupported',
  'unprocessable',
  'provider_unavailable',
  'provider_error',
  'compute_lost',
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorDetails {
  [key: string]: unknown;
}

/** A domain error: services throw it, the HTTP layer maps it to a status once. */
export class SandcastError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.name = 'SandcastError';
    this.code = code;
    this.details = details;
  }
}

export function isSandcastError(value: unknown): value is SandcastError {
  return value instanceof SandcastError;
}
