import { API_PATHS } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../metrics/metrics.ts';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Times every request by its route template (`/api/sandboxes/:id`, never the URL a caller sent;
 * `(unmatched)` for a path no route has). Registered first, so it sees every answer.
 */
export function registerRequestTiming(app: FastifyInstance, deps: { metrics: Metrics }): void {
  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.httpRequestDuration.observe(
      {
        method: METHODS.has(request.method) ? request.method : 'OTHER',
        route: request.routeOptions.url ?? '(unmatched)',
        status_class: `${Math.floor(reply.statusCode / 100)}xx`,
      },
      reply.elapsedTime / 1000,
    );
  });
}

/**
 * `GET /metrics` in the Prometheus text format. Access is `admin`: in local_trusted mode whoever
 * can reach loopback, in authenticated mode an admin key (a scrape job sends it as a bearer token).
 */
export function registerMetricsRoutes(app: FastifyInstance, deps: { metrics: Metrics }): void {
  app.get(API_PATHS.metrics, { config: { access: 'admin' } }, async (_request, reply) => {
    const text = await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).header('cache-control', 'no-store').send(text);
  });
}
