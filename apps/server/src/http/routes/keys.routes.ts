import { API_PATHS, CreateApiKeyBodySchema, UpdateApiKeyBodySchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { ApiKeysService } from '../../services/api-keys.service.ts';
import { parse } from '../validate.ts';

export function registerKeyRoutes(app: FastifyInstance, deps: { apiKeys: ApiKeysService }): void {
  const config = { access: 'admin' } as const;
  app.get(API_PATHS.apiKeys, { config }, async () => ({ keys: await deps.apiKeys.list() }));
  app.post(API_PATHS.apiKeys, { config }, async (request, reply) => {
    const created = await deps.apiKeys.create(parse(CreateApiKeyBodySchema, request.body), request.principal!);
    return reply.status(201).send(created);
  });
  app.patch<{ Params: { id: string } }>(API_PATHS.apiKey, { config }, async (request) => {
    const body = parse(UpdateApiKeyBodySchema, request.body);
    return { key: await deps.apiKeys.setAllowedAgents(request.params.id, body.allowedAgentIds, request.principal!) };
  });
  app.delete<{ Params: { id: string } }>(API_PATHS.apiKey, { config }, async (request) => ({
    key: await deps.apiKeys.revoke(request.params.id, request.principal!),
  }));
}
