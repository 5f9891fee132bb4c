import {
  API_PATHS,
  CreateFleetSandboxBodySchema,
  ExecBodySchema,
  FleetOverviewQuerySchema,
  ManageFleetSandboxBodySchema,
  SessionFileQuerySchema,
  type SessionToolName,
  WriteSessionFileBodySchema,
} from '@sandcast/contracts';
import type { Principal } from '@sandcast/core';
import type { FastifyInstance } from 'fastify';
import type { createFleetOverview } from '../../services/fleet-overview.ts';
import type { SessionTools } from '../session-tools.ts';
import { parse } from '../validate.ts';

type SessionParams = { id: string };
type ResourceParams = { id: string; rsbId: string };
type ToolParams = { id: string; name: string };

/**
 * The session's tools over REST: the generic pair (`GET …/tools`, `POST …/tools/:name`, what
 * `sandcast mcp` proxies to) and one route per fleet tool under `…/fleet/sandboxes`. Each route
 * reads its part of the request with the contracts' schema and runs the tools table; agent keys
 * reach only their own sessions (another's is 404, as is a resource sandbox it did not create).
 */
export function registerFleetRoutes(
  app: FastifyInstance,
  deps: { sessionTools: SessionTools; fleetOverview: ReturnType<typeof createFleetOverview> },
): void {
  const config = { access: 'agent', feature: 'environments' } as const;
  const { sessionTools: tools } = deps;
  const run = (request: { params: SessionParams; principal: Principal | null }, name: SessionToolName, input: unknown) =>
    tools.call(request.params.id, name, input, request.principal!);

  app.get<{ Params: SessionParams }>(API_PATHS.sessionTools, { config }, async (request) =>
    tools.list(request.params.id, request.principal!),
  );

  app.post<{ Params: ToolParams }>(API_PATHS.sessionTool, { config }, async (request) => ({
    result: await tools.call(request.params.id, request.params.name, request.body ?? {}, request.principal!),
  }));

  app.get<{ Params: SessionParams }>(API_PATHS.fleetSandboxes, { config }, async (request) => run(request, 'sandbox_list', {}));

  app.post<{ Params: SessionParams }>(API_PATHS.fleetSandboxes, { config }, async (request, reply) => {
    const body = parse(CreateFleetSandboxBodySchema, request.body ?? {});
    return reply.status(201).send(await run(request, 'sandbox_create', body));
  });

  app.get<{ Params: ResourceParams }>(API_PATHS.fleetSandbox, { config }, async (request) =>
    run(request, 'sandbox_inspect', { sandboxId: request.params.rsbId }),
  );

  app.post<{ Params: ResourceParams }>(API_PATHS.fleetSandboxExec, { config }, async (request) =>
    run(request, 'sandbox_exec', { sandboxId: request.params.rsbId, ...parse(ExecBodySchema, request.body) }),
  );

  app.get<{ Params: ResourceParams }>(API_PATHS.fleetSandboxFiles, { config }, async (request) => {
    const { path } = parse(SessionFileQuerySchema, request.query, 'query');
    return run(request, 'sandbox_read_file', { sandboxId: request.params.rsbId, path });
  });

  app.put<{ Params: ResourceParams }>(API_PATHS.fleetSandboxFiles, { config }, async (request) => {
    const { path } = parse(SessionFileQuerySchema, request.query, 'query');
    const body = parse(WriteSessionFileBodySchema, request.body);
    return run(request, 'sandbox_write_file', { sandboxId: request.params.rsbId, path, ...body });
  });

  app.post<{ Params: ResourceParams }>(API_PATHS.fleetSandboxCheckpoints, { config }, async (request, reply) =>
    reply.status(201).send(await run(request, 'sandbox_checkpoint', { sandboxId: request.params.rsbId })),
  );

  app.post<{ Params: ResourceParams }>(API_PATHS.fleetSandboxManage, { config }, async (request) =>
    run(request, 'sandbox_manage', { sandboxId: request.params.rsbId, ...parse(ManageFleetSandboxBodySchema, request.body) }),
  );

  // The operator's Fleet page: every sandbox, its attention flags computed here.
  app.get(API_PATHS.fleet, { config: { access: 'admin', feature: 'environments' } }, async (request) => {
    const query = parse(FleetOverviewQuerySchema, request.query, 'query');
    return { sandboxes: await deps.fleetOverview({ includeDeleted: query.includeDeleted === 'true' }) };
  });
}
