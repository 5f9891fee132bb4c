import { AgentListQuerySchema, API_PATHS, CreateAgentBodySchema, UpdateAgentBodySchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { AgentsService } from '../../services/agents.service.ts';
import { parse } from '../validate.ts';

type IdParams = { id: string };

/** Agents: admins manage them; an agent key may read the agents it may start sessions for. */
export function registerAgentRoutes(app: FastifyInstance, deps: { agents: AgentsService }): void {
  const admin = { access: 'admin', feature: 'environments' } as const;
  const reader = { access: 'agent', feature: 'environments' } as const;
  const { agents } = deps;

  app.get(API_PATHS.agents, { config: reader }, async (request) => {
    const query = parse(AgentListQuerySchema, request.query, 'query');
    return { agents: await agents.list(request.principal!, { includeArchived: query.includeArchived === 'true' }) };
  });

  app.post(API_PATHS.agents, { config: admin }, async (request, reply) => {
    const agent = await agents.create(parse(CreateAgentBodySchema, request.body), request.principal!);
    return reply.status(201).send(agent);
  });

  app.get<{ Params: IdParams }>(API_PATHS.agent, { config: reader }, async (request) => agents.get(request.params.id, request.principal!));

  app.patch<{ Params: IdParams }>(API_PATHS.agent, { config: admin }, async (request) =>
    agents.update(request.params.id, parse(UpdateAgentBodySchema, request.body), request.principal!),
  );

  app.delete<{ Params: IdParams }>(API_PATHS.agent, { config: admin }, async (request) =>
    agents.archive(request.params.id, request.principal!),
  );

  app.get<{ Params: IdParams }>(API_PATHS.agentVersions, { config: admin }, async (request) => ({
    versions: await agents.versions(request.params.id),
  }));
}
