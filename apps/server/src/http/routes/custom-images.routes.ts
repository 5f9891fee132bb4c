import {
  API_PATHS,
  CancelSetupBodySchema,
  DisableQuerySchema,
  ExecBodySchema,
  FinishSetupBodySchema,
  RelinkBodySchema,
  StartSetupSessionBodySchema,
} from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { CustomImagesService } from '../../services/custom-images/custom-images.service.ts';
import type { SetupSessionsService } from '../../services/custom-images/setup-sessions.service.ts';
import type { SandboxesService } from '../../services/sandboxes.service.ts';
import { type RunningExecs, replyExec } from '../exec-reply.ts';
import { presentOverview, presentSession, presentTemplate } from '../present.ts';
import { parse } from '../validate.ts';

type EnvParams = { environmentId: string };
type SessionParams = { sessionId: string };

export function registerCustomImageRoutes(
  app: FastifyInstance,
  deps: {
    customImages: CustomImagesService;
    setupSessions: SetupSessionsService;
    sandboxes: SandboxesService;
    runningExecs: RunningExecs;
  },
): void {
  const config = { access: 'admin', feature: 'environments' } as const;
  const { customImages, setupSessions } = deps;

  app.get<{ Params: EnvParams }>(API_PATHS.customImageOverview, { config }, async (request) =>
    presentOverview(await customImages.overview(request.params.environmentId)),
  );

  app.get<{ Params: EnvParams }>(API_PATHS.customImageTemplates, { config }, async (request) => ({
    templates: (await customImages.history(request.params.environmentId)).map(presentTemplate),
  }));

  app.post<{ Params: EnvParams }>(API_PATHS.setupSessions, { config }, async (request, reply) => {
    const body = parse(StartSetupSessionBodySchema, request.body ?? {});
    const started = await setupSessions.start(request.params.environmentId, body, request.principal!);
    return reply.status(201).send({ session: presentSession(started.session), connectionPayload: started.connectionPayload });
  });

  app.get<{ Params: SessionParams }>(API_PATHS.setupSession, { config }, async (request) => {
    const session = await setupSessions.requireSession(request.params.sessionId);
    return { session: presentSession(session), connectionPayload: setupSessions.connectionPayload(session) };
  });

  app.get<{ Params: SessionParams }>(API_PATHS.setupSessionChanges, { config }, (request) =>
    setupSessions.changes(request.params.sessionId),
  );

  // JSON, or NDJSON frames as the command runs (Accept: application/x-ndjson; docs/spec/exec-stream.md).
  app.post<{ Params: SessionParams }>(API_PATHS.setupSessionExec, { config }, (request, reply) => {
    const body = parse(ExecBodySchema, request.body);
    return replyExec(request, reply, {
      running: deps.runningExecs,
      json: () => setupSessions.exec(request.params.sessionId, body),
      stream: () => setupSessions.execStream(request.params.sessionId, body),
    });
  });

  app.post<{ Params: SessionParams }>(API_PATHS.setupSessionFinish, { config }, async (request) => {
    const body = parse(FinishSetupBodySchema, request.body ?? {});
    const result = await setupSessions.finish(request.params.sessionId, body, request.principal!);
    return { session: presentSession(result.session), template: presentTemplate(result.template) };
  });

  app.post<{ Params: SessionParams }>(API_PATHS.setupSessionCancel, { config }, async (request) => {
    const body = parse(CancelSetupBodySchema, request.body ?? {});
    return { session: presentSession(await setupSessions.cancel(request.params.sessionId, body, request.principal!)) };
  });

  app.post<{ Params: EnvParams }>(API_PATHS.customImageRollback, { config }, async (request) => {
    const swapped = await customImages.rollback(request.params.environmentId, request.principal!);
    return { activeTemplate: presentTemplate(swapped.activeTemplate), supersededTemplate: presentTemplate(swapped.supersededTemplate) };
  });

  app.post<{ Params: EnvParams }>(API_PATHS.customImageRelink, { config }, async (request) => {
    const body = parse(RelinkBodySchema, request.body ?? {});
    const relinked = await customImages.relink(request.params.environmentId, body, request.principal!);
    return { ...relinked, template: presentTemplate(relinked.template) };
  });

  app.delete<{ Params: EnvParams }>(API_PATHS.customImageOverview, { config }, async (request) => {
    const query = parse(DisableQuerySchema, request.query, 'query');
    const disabled = await customImages.disable(
      request.params.environmentId,
      { deleteProviderTemplate: query.deleteProviderTemplate === 'true' },
      request.principal!,
    );
    return { ...disabled, template: presentTemplate(disabled.template) };
  });

  app.post<{ Params: EnvParams }>(API_PATHS.environmentProbe, { config }, (request) =>
    deps.sandboxes.probe(request.params.environmentId, request.principal!),
  );
}
