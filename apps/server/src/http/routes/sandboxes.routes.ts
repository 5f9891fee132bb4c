import { API_PATHS, CreateSandboxBodySchema, ExecBodySchema, ForkSandboxBodySchema } from '@sandcast/contracts';
import type { Sandbox } from '@sandcast/core';
import type { FastifyInstance } from 'fastify';
import type { EgressService } from '../../egress/egress.service.ts';
import { FORK_NOTE } from '../../services/sandbox-fork.ts';
import type { SandboxesService } from '../../services/sandboxes.service.ts';
import { type RunningExecs, replyExec } from '../exec-reply.ts';
import { presentSandbox } from '../present.ts';
import { parse } from '../validate.ts';

type IdParams = { id: string };

export function registerSandboxRoutes(
  app: FastifyInstance,
  deps: { sandboxes: SandboxesService; runningExecs: RunningExecs; egress: Pick<EgressService, 'bytesOf'> },
): void {
  const admin = { access: 'admin', feature: 'environments' } as const;
  const { sandboxes, egress } = deps;
  const present = (sandbox: Sandbox) => presentSandbox(sandbox, egress.bytesOf(sandbox.id));

  app.get(API_PATHS.sandboxes, { config: admin }, async () => ({ sandboxes: (await sandboxes.list()).map(present) }));

  app.post(API_PATHS.sandboxes, { config: admin }, async (request, reply) => {
    const sandbox = await sandboxes.create(parse(CreateSandboxBodySchema, request.body), request.principal!);
    return reply.status(201).send(present(sandbox));
  });

  app.get<{ Params: IdParams }>(API_PATHS.sandbox, { config: admin }, async (request) => present(await sandboxes.get(request.params.id)));

  app.delete<{ Params: IdParams }>(API_PATHS.sandbox, { config: admin }, async (request) =>
    presentSandbox(await sandboxes.delete(request.params.id, request.principal!)),
  );

  // Agents fork sandboxes created with their own key (checked by the service).
  app.post<{ Params: IdParams }>(
    API_PATHS.sandboxFork,
    { config: { access: 'agent', feature: 'environments' } },
    async (request, reply) => {
      const { count } = parse(ForkSandboxBodySchema, request.body);
      const forks = await sandboxes.fork(request.params.id, count, request.principal!);
      return reply.status(201).send({ sandboxes: forks.map((fork) => presentSandbox(fork)), processesCopied: false, note: FORK_NOTE });
    },
  );

  app.get<{ Params: { environmentId: string } }>(API_PATHS.environmentWarmPool, { config: admin }, async (request) =>
    sandboxes.pools.state(request.params.environmentId),
  );

  // Agents reach this one, for sandboxes created with their own key (checked by the service).
  // JSON, or NDJSON frames as the command runs (Accept: application/x-ndjson; docs/spec/exec-stream.md).
  app.post<{ Params: IdParams }>(API_PATHS.sandboxExec, { config: { access: 'agent', feature: 'environments' } }, (request, reply) => {
    const body = parse(ExecBodySchema, request.body);
    return replyExec(request, reply, {
      running: deps.runningExecs,
      json: () => sandboxes.exec(request.params.id, body, request.principal!),
      stream: () => sandboxes.execStream(request.params.id, body, request.principal!),
    });
  });
}
