import { ERROR_CODES, type ErrorCode } from '@sandcast/core';
import { z } from 'zod';

/** The HTTP status each error code is answered with. The one place this mapping lives. */
export const HTTP_STATUS_BY_CODE: Record<ErrorCode, number> = {
  bad_request: 400,
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  feature_disabled: 403,
  host_not_allowed: 421,
  not_found: 404,
  conflict: 409,
  invalid_transition: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  not_acceptable: 406,
  method_not_allowed: 405,
  capability_unsupported: 422,
  unprocessable: 422,
  provider_unavailable: 503,
  provider_error: 502,
  compute_lost: 409,
  internal: 500,
};

export type { ErrorCode };

/** One of the closed set of codes (docs/spec/errors.md): switch on it exhaustively. */
export const ErrorCodeSchema = z.enum(ERROR_CODES);

export const ErrorEnvelopeSchema = z.object({
  error: z.object({
    code: ErrorCodeSchema,
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

/** One invalid field, as reported in `details.issues` of a `validation_failed` error. */
export interface FieldIssue {
  path: string;
  message: string;
}
