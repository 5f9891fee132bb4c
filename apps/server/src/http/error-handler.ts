import { type ErrorEnvelope, HTTP_STATUS_BY_CODE } from '@sandcast/contracts';
import { isSandcastError, SandcastError } from '@sandcast/core';
import { isProviderError, type ProviderError } from '@sandcast/provider-sdk';
import type { FastifyError, FastifyInstance } from 'fastify';
import { assertCleanJson, registerUrlCheck } from './request-bytes.ts';

function fromProviderError(error: ProviderError): SandcastError {
  const details = { provider: error.provider, providerCode: error.code };
  switch (error.code) {
    case 'unavailable':
      return new SandcastError('provider_unavailable', error.message, details);
    case 'not_found':
      return new SandcastError('not_found', error.message, details);
    case 'invalid_config':
      return new SandcastError('unprocessable', error.message, details);
    case 'unsupported':
      return new SandcastError('capability_unsupported', error.message, details);
    case 'in_use':
    case 'not_running':
      return new SandcastError('conflict', error.message, details);
    case 'invalid_input':
      return new SandcastError('bad_request', error.message, details);
    case 'too_large':
      return new SandcastError('payload_too_large', error.message, details);
    case 'capture_failed':
    case 'timeout':
    case 'backend':
      return new SandcastError('provider_error', error.message, details);
    default: {
      const never: never = error.code;
      return never;
    }
  }
}

/** Fastify's own 4xx errors (bad JSON, huge bodies, wrong media type) in our vocabulary. */
function fromFastifyError(error: FastifyError): SandcastError | null {
  const status = error.statusCode ?? 500;
  if (status >= 500) return null;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new SandcastError('payload_too_large', 'the request body is too large; the limit is 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new SandcastError('unsupported_media_type', 'send the request body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new SandcastError(
        'bad_request',
        'the body is empty but Content-Type is application/json; send a JSON object or drop the header',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new SandcastError('bad_request', `the request body is not valid JSON: ${error.message}`);
    default:
      if (error instanceof SyntaxError) return new SandcastError('bad_request', `the request body is not valid JSON: ${error.message}`);
      return new SandcastError('bad_request', error.message);
  }
}

/**
 * The kernel's "argument list too long", from a spawn on this host or wrapped by a provider: the
 * request asked for more arguments or environment than a process can be given, which is the
 * caller's to fix. The exec contracts cap both well below the limit, so this is the backstop.
 */
function isArgumentListTooLong(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if ((e as NodeJS.ErrnoException).code === 'E2BIG' || /\bE2BIG\b/.test(e.message)) return true;
  }
  return false;
}

/** Maps an error of any origin to the envelope and status. Unknown errors become a logged 500. */
export function toErrorResponse(error: unknown): { status: number; body: ErrorEnvelope; internal: boolean } {
  const mapped = isSandcastError(error)
    ? error
    : isArgumentListTooLong(error)
      ? new SandcastError(
          'bad_request',
          "the command's arguments and environment are too large for a process (E2BIG); pass big data as a file or on stdin instead",
        )
      : isProviderError(error)
        ? fromProviderError(error)
        : fromFastifyError(error as FastifyError);
  if (!mapped) {
    return {
      status: 500,
      internal: true,
      body: { error: { code: 'internal', message: 'internal error; the server log has the details' } },
    };
  }
  const body: ErrorEnvelope = {
    error: { code: mapped.code, message: mapped.message, ...(mapped.details ? { details: mapped.details } : {}) },
  };
  return { status: HTTP_STATUS_BY_CODE[mapped.code], body, internal: false };
}

/**
 * JSON bodies: an empty body reads as no body (a DELETE with a stray Content-Type is fine); a
 * `__proto__` key is refused rather than risk prototype pollution further down, and so are NUL,
 * lone surrogates and absurd nesting (assertCleanJson).
 */
function registerJsonParser(app: FastifyInstance): void {
  // Only JSON is accepted; anything else is a 415 rather than a string the schemas then refuse.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return done(new SandcastError('bad_request', `the request body is not valid JSON: ${(error as Error).message}`), undefined);
    }
    try {
      assertCleanJson(parsed);
    } catch (error) {
      return done(error as Error, undefined);
    }
    done(null, parsed);
  });
}

export function registerErrorHandling(app: FastifyInstance): void {
  registerJsonParser(app);
  registerUrlCheck(app);
  app.setErrorHandler((error, request, reply) => {
    const response = toErrorResponse(error);
    if (response.internal) request.log.error({ err: error }, 'request failed');
    else if (response.status >= 500)
      request.log.warn({ code: response.body.error.code, message: response.body.error.message }, 'request failed');
    void reply.status(response.status).send(response.body);
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({ error: { code: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` } });
  });
}
