import type { FastifyRequest } from 'fastify';

/**
 * Fastify's request serializer, except that terminal WebSocket URLs are logged without their
 * query string: it names the terminal session, and a client that wrongly put its token there
 * must not have it written to the log.
 */
export function serializeRequestForLog(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactTerminalUrl(request.url),
    version: [request.headers?.['accept-version']].flat()[0],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket ? request.socket.remotePort : undefined,
  };
}

export function redactTerminalUrl(url: string): string {
  const query = url.indexOf('?');
  if (query < 0) return url;
  const path = url.slice(0, query);
  return path.endsWith('/terminal/ws') ? `${path}?[redacted]` : url;
}
