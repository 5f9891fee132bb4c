import { API_PATHS, OpenPortBodySchema, PortParamSchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { PortOwner } from '../../ports/port-hosts.ts';
import type { PortsService } from '../../services/ports.service.ts';
import { parse } from '../validate.ts';

type Params = Record<string, string>;

/** Each owner of ports: its paths and how its id is read from them. The four routes are the same for both. */
const OWNERS: Array<{ kind: PortOwner['kind']; param: string; list: string; url: string; one: string }> = [
  { kind: 'sandbox', param: 'id', list: API_PATHS.sandboxPorts, url: API_PATHS.sandboxPortUrl, one: API_PATHS.sandboxPort },
  {
    kind: 'setup',
    param: 'sessionId',
    list: API_PATHS.setupSessionPorts,
    url: API_PATHS.setupSessionPortUrl,
    one: API_PATHS.setupSessionPort,
  },
];

/** Ports of sandboxes and of setup sessions as URLs (docs/decisions/0015-sandbox-ports.md, 0017-setup-session-ports.md). */
export function registerPortRoutes(app: FastifyInstance, deps: { ports: PortsService }): void {
  const admin = { access: 'admin', feature: 'environments' } as const;
  const { ports } = deps;
  const portOf = (params: Params) => parse(PortParamSchema, params.port, 'params');

  for (const paths of OWNERS) {
    const ownerOf = (params: Params): PortOwner => ({ kind: paths.kind, id: params[paths.param]! });

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
