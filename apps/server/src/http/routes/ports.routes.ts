import { OpenPortBodySchema, PORT_OWNERS, type PortOwnerKind, PortParamSchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { PortOwner } from '../../ports/port-hosts.ts';
import type { PortsService } from '../../services/ports.service.ts';
import { parse } from '../validate.ts';

type Params = Record<string, string>;

/**
 * Ports of sandboxes and of setup sessions as URLs (docs/decisions/0015-sandbox-ports.md,
 * 0017-setup-session-ports.md): the same four routes for each owner in PORT_OWNERS.
 */
export function registerPortRoutes(app: FastifyInstance, deps: { ports: PortsService }): void {
  const admin = { access: 'admin', feature: 'environments' } as const;
  const { ports } = deps;
  const portOf = (params: Params) => parse(PortParamSchema, params.port, 'params');

  for (const kind of Object.keys(PORT_OWNERS) as PortOwnerKind[]) {
    const { param, paths } = PORT_OWNERS[kind];
    const ownerOf = (params: Params): PortOwner => ({ kind, id: params[param]! });

    app.get<{ Params: Params }>(paths.list, { config: admin }, async (request) => ({ ports: await ports.list(ownerOf(request.params)) }));

    app.post<{ Params: Params }>(paths.list, { config: admin }, async (request, reply) => {
      const opened = await ports.open(ownerOf(request.params), parse(OpenPortBodySchema, request.body), request.principal!);
      return reply.status(201).send(opened);
    });

    app.get<{ Params: Params }>(paths.url, { config: admin }, async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return ports.url(ownerOf(request.params), portOf(request.params));
    });

    app.delete<{ Params: Params }>(paths.one, { config: admin }, async (request) =>
      ports.close(ownerOf(request.params), portOf(request.params), request.principal!),
    );
  }
}
