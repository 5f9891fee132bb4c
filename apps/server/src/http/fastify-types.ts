import type { Principal, RouteAccess } from '@sandcast/core';

/** Gates a route behind an experimental setting; it answers 403 feature_disabled while off. */
export type RouteFeature = 'environments';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Every route declares who may call it; registration fails without it. */
    access?: RouteAccess;
    feature?: RouteFeature;
  }
  interface FastifyRequest {
    /** Set by the auth hook before anything else runs; null for anonymous callers. */
    principal: Principal | null;
  }
}
