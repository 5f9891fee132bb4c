import {
  API_PATHS,
  ExecBodySchema,
  type SessionFileBody,
  SessionFileQuerySchema,
  StartSessionBodySchema,
  WriteSessionFileBodySchema,
} from '@sandcast/contracts';
import { SandcastError } from '@sandcast/core';
import type { FastifyInstance } from 'fastify';
import type { CheckpointsService } from '../../checkpoints/checkpoints.service.ts';
import type { SandboxesService } from '../../services/sandboxes.service.ts';
import type { SessionsService } from '../../services/sessions/sessions.service.ts';
import { type RunningExecs, replyExec } from '../exec-reply.ts';
import { presentAgentSession, presentSessionSandbox } from '../present.ts';
import { parse } from '../validate.ts';

type IdParams = { id: string };

/**
 * The largest file the files tools move: its base64 form (and the JSON around it) still fits in
 * the 1 MiB request body limit. Bigger files go through exec.
 */
const SESSION_FILE_MAX_BYTES = 768 * 1024;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Text when the bytes are UTF-8 (and hold no NUL), base64 otherwise. */
function encodeFile(path: string, data: Buffer): SessionFileBody {
  const text = data.toString('utf8');
  const isText = !text.includes('\0') && Buffer.from(text, 'utf8').equals(data);
  return { path, encoding: isText ? 'utf8' : 'base64', content: isText ? text : data.toString('base64'), sizeBytes: data.length };
}

const tooLarge = (bytes: number) =>
  new SandcastError(
    'payload_too_large',
    `the file is ${bytes} bytes; the files tools move at most ${SESSION_FILE_MAX_BYTES} bytes — use exec for larger files`,
    { sizeBytes: bytes, limitBytes: SESSION_FILE_MAX_BYTES },
  );

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
    const sandbox = await sessions.useSandbox(request.params.id, request.principal!);
    // A command may change anything: a checkpointed workspace is committed before the answer.
    const checkpoint = () => checkpoints.afterMutation(sandbox.id);
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
    const sandbox = await sessions.useSandbox(request.params.id, request.principal!);
    const { value: data, recovered } = await sandboxes.readFile(sandbox.id, path, request.principal!);
    if (data.length > SESSION_FILE_MAX_BYTES) throw tooLarge(data.length);
    return { ...encodeFile(path, data), ...(recovered ? { recovered } : {}) };
  });

  app.put<{ Params: IdParams }>(API_PATHS.sessionFiles, { config }, async (request) => {
    const { path } = parse(SessionFileQuerySchema, request.query, 'query');
    const body = parse(WriteSessionFileBodySchema, request.body);
    if (body.encoding === 'base64' && !BASE64.test(body.content)) {
      throw new SandcastError('validation_failed', 'invalid request body: content: not valid base64 (RFC 4648, with padding)', {
        issues: [{ path: 'content', message: 'not valid base64' }],
      });
    }
    const data = Buffer.from(body.content, body.encoding);
    if (data.length > SESSION_FILE_MAX_BYTES) throw tooLarge(data.length);
    const sandbox = await sessions.useSandbox(request.params.id, request.principal!);
    const { recovered } = await sandboxes.writeFile(sandbox.id, path, data, body.mode, request.principal!);
    await checkpoints.afterMutation(sandbox.id);
    return { path, sizeBytes: data.length, ...(recovered ? { recovered } : {}) };
  });
}
