import { API_PATHS, OpenPortBodySchema, PortParamSchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { PortsService } from '../../services/ports.service.ts';
import { parse } from '../validate.ts';

type IdParams = { id: string };
type PortParams = { id: string; port: string };

/** A sandbox's ports as URLs (docs/decisions/0015-sandbox-ports.md). */
export function registerPortRoutes(app: FastifyInstance, deps: { ports: PortsService }): void {
  const admin = { access: 'admin', feature: 'environments' } as const;
  const { ports } = deps;
  const portOf = (params: PortParams) => parse(PortParamSchema, params.port, 'params');

  app.get<{ Params: IdParams }>(API_PATHS.sandboxPorts, { config: admin }, async (request) => ({
    ports: await ports.list(request.params.id),
  }));

  app.post<{ Params: IdParams }>(API_PATHS.sandboxPorts, { config: admin }, async (request, reply) => {
    const opened = await ports.open(request.params.id, parse(OpenPortBodySchema, request.body), request.principal!);
    return reply.status(201).send(opened);
  });

  app.get<{ Params: PortParams }>(API_PATHS.sandboxPortUrl, { config: admin }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return ports.url(request.params.id, portOf(request.params));
  });

  app.delete<{ Params: PortParams }>(API_PATHS.sandboxPort, { config: admin }, async (request) =>
    ports.close(request.params.id, portOf(request.params), request.principal!),
  );
}
