import type { FastifyInstance } from 'fastify';

/**
 * Per-request log lines at `debug`, so at the default `info` the start summary and real events are
 * not drowned by one line per poll; an answer of 500 or more stays at `warn` (the error handler
 * logs the failure itself at `error` or `warn`). Replaces Fastify's own request logging, which
 * writes every request at `info`.
 */
export function registerRequestLogging(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    request.log.debug({ req: request }, 'incoming request');
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const entry = { res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
    if (reply.statusCode >= 500) request.log.warn(entry, 'request completed');
    else request.log.debug(entry, 'request completed');
    done();
  });
}
