import { API_PATHS, BridgeUpstreamNameSchema, PutBridgeUpstreamBodySchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import { type BridgeUpstreamsService, presentBridgeUpstream } from '../../services/bridge-upstreams.service.ts';
import { parse } from '../validate.ts';

type NameParams = { name: string };

const nameOf = (params: NameParams) => parse(BridgeUpstreamNameSchema, params.name, 'params');

/** The host bridge's upstreams: admin only; the credential goes in and never comes out. */
export function registerBridgeUpstreamRoutes(app: FastifyInstance, deps: { bridgeUpstreams: BridgeUpstreamsService }): void {
  const config = { access: 'admin' } as const;

  app.get(API_PATHS.bridgeUpstreams, { config }, async () => ({
    upstreams: (await deps.bridgeUpstreams.list()).map(presentBridgeUpstream),
  }));

  app.put<{ Params: NameParams }>(API_PATHS.bridgeUpstream, { config }, async (request) => {
    const name = nameOf(request.params);
    const body = parse(PutBridgeUpstreamBodySchema, request.body);
    return presentBridgeUpstream(await deps.bridgeUpstreams.put(name, body, request.principal!));
  });

  app.delete<{ Params: NameParams }>(API_PATHS.bridgeUpstream, { config }, async (request) =>
    presentBridgeUpstream(await deps.bridgeUpstreams.delete(nameOf(request.params), request.principal!)),
  );
}
