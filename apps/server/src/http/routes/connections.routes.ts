import { API_PATHS, CreateConnectionBodySchema, UpdateConnectionBodySchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import { type ConnectionsService, presentConnection } from '../../services/connections.service.ts';
import { parse } from '../validate.ts';

type IdParams = { id: string };

/** Provider connections: admin only, behind the environments feature they serve. */
export function registerConnectionRoutes(app: FastifyInstance, deps: { connections: ConnectionsService }): void {
  const config = { access: 'admin', feature: 'environments' } as const;

  app.get(API_PATHS.connections, { config }, async () => ({ connections: (await deps.connections.list()).map(presentConnection) }));

  app.post(API_PATHS.connections, { config }, async (request, reply) => {
    const body = parse(CreateConnectionBodySchema, request.body);
    return reply.status(201).send(presentConnection(await deps.connections.create(body, request.principal!)));
  });

  app.get<{ Params: IdParams }>(API_PATHS.connection, { config }, async (request) =>
    presentConnection(await deps.connections.get(request.params.id)),
  );

  app.patch<{ Params: IdParams }>(API_PATHS.connection, { config }, async (request) => {
    const body = parse(UpdateConnectionBodySchema, request.body);
    return presentConnection(await deps.connections.update(request.params.id, body, request.principal!));
  });

  app.delete<{ Params: IdParams }>(API_PATHS.connection, { config }, async (request) =>
    presentConnection(await deps.connections.delete(request.params.id, request.principal!)),
  );

  app.post<{ Params: IdParams }>(API_PATHS.connectionTest, { config }, async (request) => deps.connections.test(request.params.id));
}
