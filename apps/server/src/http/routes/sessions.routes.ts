import { API_PATHS, ExecBodySchema, SessionFileQuerySchema, StartSessionBodySchema, WriteSessionFileBodySchema } from '@sandcast/contracts';
import type { FastifyInstance } from 'fastify';
import type { CheckpointsService } from '../../checkpoints/checkpoints.service.ts';
import type { SandboxesService } from '../../services/sandboxes.service.ts';
import { decodeFile, encodeFile } from '../../services/sessions/session-files.ts';
import type { SessionsService } from '../../services/sessions/sessions.service.ts';
import { type RunningExecs, replyExec } from '../exec-reply.ts';
import { presentAgentSession, presentSessionSandbox } from '../present.ts';
import { parse } from '../validate.ts';

type IdParams = { id: string };

/**
 * Sessions and their primary sandbox's tools, addressed by session id. Every route is open to
 * agent keys; the service answers 404 for a session another key started.
 */
export function registerSessionRoutes(
  app: FastifyInstance,
  deps: { sessions: SessionsService; sandboxes: SandboxesService; checkpoints: CheckpointsService; runningExecs: RunningExecs },
): void {
  const config = { access: 'agent', feature: 'environments' } as const;
  const { sessions, sandboxes, checkpoints } = deps;

  app.get(API_PATHS.sessions, { config }, async (request) => ({
    sessions: (await sessions.list(request.principal!)).map(presentAgentSession),
  }));

  app.post(API_PATHS.sessions, { config }, async (request, reply) => {
    const session = await sessions.start(parse(StartSessionBodySchema, request.body), request.principal!);
    return reply.status(201).send(presentAgentSession(session));
  });

  app.get<{ Params: IdParams }>(API_PATHS.session, { config }, async (request) =>
    presentAgentSession(await sessions.get(request.params.id, request.principal!)),
  );

  app.post<{ Params: IdParams }>(API_PATHS.sessionEnd, { config }, async (request) =>
    presentAgentSession(await sessions.end(request.params.id, request.principal!)),
  );

  app.get<{ Params: IdParams }>(API_PATHS.sessionSandbox, { config }, async (request) =>
    presentSessionSandbox(await sessions.sandbox(request.params.id, request.principal!)),
  );

  // JSON, or NDJSON frames as the command runs — exactly as POST /api/sandboxes/:id/exec.
  app.post<{ Params: IdParams }>(API_PATHS.sessionExec, { config }, async (request, reply) => {
    const body = parse(ExecBodySchema, request.body);
    const sandbox = await sessions.useSandbox(request.params.id, request.principal!, { touch: false });
    // A command may change anything: a checkpointed workspace is committed before the answer.
    const checkpoint = () => checkpoints.afterMutation(sandbox.id, sandbox);
    return replyExec(request, reply, {
      running: deps.runningExecs,
      json: async () => {
        const result = await sandboxes.exec(sandbox.id, body, request.principal!);
        await checkpoint();
        return result;
      },
      stream: () => sandboxes.execStream(sandbox.id, body, request.principal!),
      beforeExit: checkpoint,
    });
  });

  app.get<{ Params: IdParams }>(API_PATHS.sessionFiles, { config }, async (request) => {
    const { path } = parse(SessionFileQuerySchema, request.query, 'query');
    const sandbox = await sessions.useSandbox(request.params.id, request.principal!, { touch: false });
    const { value: data, recovered } = await sandboxes.readFile(sandbox.id, path, request.principal!);
    return { ...encodeFile(path, data), ...(recovered ? { recovered } : {}) };
  });

  app.put<{ Params: IdParams }>(API_PATHS.sessionFiles, { config }, async (request) => {
    const { path } = parse(SessionFileQuerySchema, request.query, 'query');
    const body = parse(WriteSessionFileBodySchema, request.body);
    const data = decodeFile(body);
    const sandbox = await sessions.useSandbox(request.params.id, request.principal!, { touch: false });
    const { recovered } = await sandboxes.writeFile(sandbox.id, path, data, body.mode, request.principal!);
    await checkpoints.afterMutation(sandbox.id, sandbox);
    return { path, sizeBytes: data.length, ...(recovered ? { recovered } : {}) };
  });
}
