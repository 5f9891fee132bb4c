import { API_PATHS, CheckpointParamsSchema, CreateCheckpointBodySchema, type RestoreCheckpointAnswer } from '@sandcast/contracts';
import { type Sandbox, SandcastError } from '@sandcast/core';
import type { FastifyInstance } from 'fastify';
import type { CheckpointsService } from '../../checkpoints/checkpoints.service.ts';
import type { SandboxesService } from '../../services/sandboxes.service.ts';
import type { SessionsService } from '../../services/sessions/sessions.service.ts';
import type { SettingsService } from '../../services/settings.service.ts';
import { wantsNdjson } from '../exec-reply.ts';
import { streamOperation } from '../operation-stream.ts';
import { presentCheckpoint } from '../present.ts';
import { parse } from '../validate.ts';

type IdParams = { id: string };

const requireCheckpointed = (sandbox: Sandbox) => {
  if (sandbox.spec.durability !== 'checkpointed') {
    throw new SandcastError(
      'conflict',
      `sandbox ${sandbox.id} has durability "${sandbox.spec.durability}"; only checkpointed sandboxes keep checkpoints — use an environment (or binding) with durability checkpointed`,
      { durability: sandbox.spec.durability },
    );
  }
};

/**
 * The checkpoints of a session's primary sandbox: list, take one now, roll back to one. Open to
 * agent keys for their own sessions (another key's session is a 404, as with the other tools).
 */
export function registerCheckpointRoutes(
  app: FastifyInstance,
  deps: { sessions: SessionsService; sandboxes: SandboxesService; checkpoints: CheckpointsService; settings: SettingsService },
): void {
  const config = { access: 'agent', feature: 'environments' } as const;
  const { sessions, sandboxes, checkpoints } = deps;

  app.get<{ Params: IdParams }>(API_PATHS.sessionCheckpoints, { config }, async (request) => {
    const { sandbox } = await sessions.sandbox(request.params.id, request.principal!);
    const list = await checkpoints.list(sandbox.id);
    return {
      checkpoints: list.map((c) => presentCheckpoint(c, sandbox.currentCheckpointId)),
      currentCheckpointId: sandbox.currentCheckpointId,
      retention: (await deps.settings.get()).sessions.checkpointRetention,
    };
  });

  app.post<{ Params: IdParams }>(API_PATHS.sessionCheckpoints, { config }, async (request, reply) => {
    parse(CreateCheckpointBodySchema, request.body === undefined ? {} : request.body);
    const actor = request.principal!;
    const sandbox = await sessions.useSandbox(request.params.id, actor);
    requireCheckpointed(sandbox);
    const { value, recovered } = await sandboxes.withCompute(sandbox.id, actor, (current) => checkpoints.take(current, 'manual', actor));
    if (!value) throw new SandcastError('conflict', `sandbox ${sandbox.id} got new compute while the checkpoint was taken; try again`);
    const current = await sessions.sandbox(request.params.id, actor);
    return reply
      .status(201)
      .send({ checkpoint: presentCheckpoint(value, current.sandbox.currentCheckpointId), ...(recovered ? { recovered } : {}) });
  });

  app.post<{ Params: { id: string; checkpointId: string } }>(API_PATHS.sessionCheckpointRestore, { config }, async (request, reply) => {
    const { checkpointId } = parse(CheckpointParamsSchema, request.params, 'params');
    parse(CreateCheckpointBodySchema, request.body === undefined ? {} : request.body);
    const stream = wantsNdjson(request.headers.accept);
    const actor = request.principal!;
    const sandbox = await sessions.useSandbox(request.params.id, actor);
    requireCheckpointed(sandbox);
    // Refused before any compute is touched: another sandbox's checkpoint does not exist here.
    await checkpoints.requireCheckpoint(sandbox, checkpointId);
    const run = async (progress?: (p: { phase: string; fraction?: number | undefined }) => void): Promise<RestoreCheckpointAnswer> => {
      const { value, recovered } = await sandboxes.withCompute(sandbox.id, actor, (current) =>
        checkpoints.restore(current, checkpointId, actor, progress),
      );
      return { checkpoint: presentCheckpoint(value, value.id), ...(recovered ? { recovered } : {}) };
    };
    if (!stream) return run();
    return streamOperation(reply, run, (result) => ({ type: 'done' as const, result }));
  });
}
