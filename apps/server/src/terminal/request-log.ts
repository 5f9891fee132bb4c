import type { FastifyRequest } from 'fastify';
import { stdSerializers } from 'pino';

/**
 * Fastify's request serializer, except that URLs are logged without their query string: on the
 * terminal socket it names the terminal session (and a client that wrongly put its token there
 * must not have it written to the log), and on other routes it is caller-chosen text that may be
 * a secret or bytes a log reader should not have to trust.
 */
export function serializeRequestForLog(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactQueryString(request.url),
    version: [request.headers?.['accept-version']].flat()[0],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket ? request.socket.remotePort : undefined,
  };
}

function redactQueryString(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : `${url.slice(0, query)}?[redacted]`;
}

/**
 * pino's error serializer, minus SQL parameters: a failed query's error carries them (as
 * `params` and in its message), and they hold API key and session hashes, names and config.
 */
export function serializeErrorForLog(error: Error) {
  return redactSqlParams(stdSerializers.err(error)) as ReturnType<typeof stdSerializers.err>;
}

function redactSqlParams(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(/\nparams: [^\n]*/g, '\nparams: [redacted]');
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (Array.isArray(value)) return value.map((v) => redactSqlParams(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'params' ? '[redacted]' : redactSqlParams(v, depth + 1)]));
}
