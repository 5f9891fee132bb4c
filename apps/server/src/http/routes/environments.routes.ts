import { API_PATHS, CreateEnvironmentBodySchema, UpdateEnvironmentBodySchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { EnvironmentsService } from '../../services/environments.service.ts';
import { presentEnvironment, presentRevision } from '../present.ts';
import { parse } from '../validate.ts';

type IdParams = { id: string };

export function registerEnvironmentRoutes(app: FastifyInstance, deps: { environments: EnvironmentsService }): void {
  const config = { access: 'admin', feature: 'environments' } as const;

  app.get(API_PATHS.environments, { config }, async () => ({ environments: (await deps.environments.list()).map(presentEnvironment) }));

  app.post(API_PATHS.environments, { config }, async (request, reply) => {
    const body = parse(CreateEnvironmentBodySchema, request.body);
    const environment = await deps.environments.create(body, request.principal!);
    return reply.status(201).send(presentEnvironment(environment));
  });

  app.get<{ Params: IdParams }>(API_PATHS.environment, { config }, async (request) =>
    presentEnvironment(await deps.environments.get(request.params.id)),
  );

  app.patch<{ Params: IdParams }>(API_PATHS.environment, { config }, async (request) => {
    const body = parse(UpdateEnvironmentBodySchema, request.body);
    const { environment, customImageReconciliation } = await deps.environments.update(request.params.id, body, request.principal!);
    return { ...presentEnvironment(environment), customImageReconciliation };
  });

  app.delete<{ Params: IdParams }>(API_PATHS.environment, { config }, async (request) =>
    presentEnvironment(await deps.environments.delete(request.params.id, request.principal!)),
  );

  app.get<{ Params: IdParams }>(API_PATHS.environmentRevisions, { config }, async (request) => ({
    revisions: (await deps.environments.revisions(request.params.id)).map(presentRevision),
  }));
}
