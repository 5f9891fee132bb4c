import { API_PATHS, InstanceSettingsPatchSchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { SettingsService } from '../../services/settings.service.ts';
import { parse } from '../validate.ts';

export function registerSettingsRoutes(app: FastifyInstance, deps: { settings: SettingsService }): void {
  app.get(API_PATHS.instanceSettings, { config: { access: 'admin' } }, () => deps.settings.get());
  app.patch(API_PATHS.instanceSettings, { config: { access: 'admin' } }, (request) =>
    deps.settings.update(parse(InstanceSettingsPatchSchema, request.body), request.principal!),
  );
}
