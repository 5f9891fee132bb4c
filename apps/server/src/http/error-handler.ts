import { type ErrorEnvelope, HTTP_STATUS_BY_CODE } from '@sandcast/contracts';
import { isSandcastError, SandcastError } from '@sandcast/core';
import { isProviderError, type ProviderError } from '@sandcast/provider-sdk';
import type { FastifyError, FastifyInstance } from 'fastify';

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

/** Maps an error of any origin to the envelope and status. Unknown errors become a logged 500. */
export function toErrorResponse(error: unknown): { status: number; body: ErrorEnvelope; internal: boolean } {
  const mapped = isSandcastError(error)
    ? error
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
 * JSON bodies: an empty body reads as no body (a DELETE with a stray Content-Type is fine), and
 * a `__proto__` key is refused rather than risk prototype pollution further down.
 */
function registerJsonParser(app: FastifyInstance): void {
  // Only JSON is accepted; anything else is a 415 rather than a string the schemas then refuse.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(
        null,
        JSON.parse(text, (key, value: unknown) => {
          if (key === '__proto__') throw new SyntaxError('the key "__proto__" is not allowed');
          return value;
        }),
      );
    } catch (error) {
      done(new SandcastError('bad_request', `the request body is not valid JSON: ${(error as Error).message}`), undefined);
    }
  });
}

export function registerErrorHandling(app: FastifyInstance): void {
  registerJsonParser(app);
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
