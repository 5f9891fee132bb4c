import type { RouteAccess } from '@sandcast/core';
import type { RouteFeature } from './fastify-types.ts';

/** A registered route and the access it declared. */
export interface RouteEntry {
  method: string;
  url: string;
  access: RouteAccess;
  /** The experimental feature that gates it, if any. */
  feature?: RouteFeature | undefined;
}
