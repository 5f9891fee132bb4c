import { describe, expect, it } from 'vitest';
import { apiErrorFromAnswer, type SandcastApiError, type SandcastApiErrorCode } from './errors.ts';

/**
 * A caller's exhaustive switch: it type-checks only while `code` is a closed union, and fails to
 * type-check (the `satisfies never`) as soon as a code is added without a case here.
 */
function advice(error: SandcastApiError): string {
  const code = error.code;
  switch (code) {
    case 'bad_request':
    case 'validation_failed':
    case 'unprocessable':
    case 'capability_unsupported':
    case 'payload_too_large':
    case 'unsupported_media_type':
    case 'host_not_allowed':
    case 'not_acceptable':
    case 'method_not_allowed':
      return 'fix the request';
    case 'unauthorized':
    case 'forbidden':
      return 'use another key';
    case 'feature_disabled':
      return 'turn the feature on';
    case 'not_found':
    case 'conflict':
    case 'invalid_transition':
      return 'reload';
    case 'compute_lost':
      return 'start a new session';
    case 'provider_unavailable':
    case 'provider_error':
    case 'internal':
    case 'http_error':
      return 'retry later';
    default:
      return code satisfies never;
  }
}

describe('SandcastApiError.code', () => {
  it('is the code of the envelope', () => {
    const error = apiErrorFromAnswer(409, JSON.stringify({ error: { code: 'conflict', message: 'taken', details: { name: 'x' } } }));
    expect([error.status, error.code, error.message, error.details]).toEqual([409, 'conflict', 'taken', { name: 'x' }]);
    expect(advice(error)).toBe('reload');
  });

  it('is http_error for an answer without an envelope, or with a code outside the closed set', () => {
    const page = apiErrorFromAnswer(502, '<html>bad gateway</html>');
    expect([page.code, page.message]).toEqual(['http_error', 'HTTP 502: <html>bad gateway</html>']);
    const unknown = apiErrorFromAnswer(418, JSON.stringify({ error: { code: 'teapot', message: 'short and stout' } }));
    expect(unknown.code satisfies SandcastApiErrorCode).toBe('http_error');
    expect(advice(unknown)).toBe('retry later');
  });
});
