import { API_PATHS, CreateEnvironmentBodySchema, UpdateEnvironmentBodySchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { CustomImagesService } from '../../services/custom-images/custom-images.service.ts';
import type { EnvironmentsService } from '../../services/environments.service.ts';
import { parse } from '../validate.ts';

type IdParams = { id: string };

export function registerEnvironmentRoutes(
  app: FastifyInstance,
  deps: { environments: EnvironmentsService; customImages: CustomImagesService },
): void {
  const config = { access: 'admin', feature: 'environments' } as const;

  app.get(API_PATHS.environments, { config }, async () => ({ environments: await deps.environments.list() }));

  app.post(API_PATHS.environments, { config }, async (request, reply) => {
    const body = parse(CreateEnvironmentBodySchema, request.body);
    const environment = await deps.environments.create(body, request.principal!);
    return reply.status(201).send(environment);
  });

  app.get<{ Params: IdParams }>(API_PATHS.environment, { config }, (request) => deps.environments.get(request.params.id));

  app.patch<{ Params: IdParams }>(API_PATHS.environment, { config }, async (request) => {
    const body = parse(UpdateEnvironmentBodySchema, request.body);
    const { environment, newRevision } = await deps.environments.update(request.params.id, body, request.principal!);
    // A new revision may change what the active custom image was built from.
    const customImageReconciliation = newRevision
      ? await deps.customImages.reconcileAfterEdit(environment.id, request.principal!)
      : { action: 'none' };
    return { ...environment, customImageReconciliation };
  });

  app.delete<{ Params: IdParams }>(API_PATHS.environment, { config }, (request) =>
    deps.environments.delete(request.params.id, request.principal!),
  );

  app.get<{ Params: IdParams }>(API_PATHS.environmentRevisions, { config }, async (request) => ({
    revisions: await deps.environments.revisions(request.params.id),
  }));
}
