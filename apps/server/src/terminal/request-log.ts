import type { FastifyRequest } from 'fastify';

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

export function redactQueryString(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : `${url.slice(0, query)}?[redacted]`;
}
