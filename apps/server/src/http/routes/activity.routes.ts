import { ActivityQuerySchema, API_PATHS } from '@sandcast/contracts';
import type { Store } from '@sandcast/db';
import type { FastifyInstance } from 'fastify';
import { parse } from '../validate.ts';

export function registerActivityRoutes(app: FastifyInstance, deps: { store: Store }): void {
  app.get(API_PATHS.activity, { config: { access: 'admin' } }, async (request) => {
    const query = parse(ActivityQuerySchema, request.query, 'query');
    return { activity: await deps.store.repos.activity.list(query) };
  });
}
