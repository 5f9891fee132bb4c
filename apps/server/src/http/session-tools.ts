import {
  SESSION_TOOL_NAMES,
  SESSION_TOOLS,
  type SessionToolInput,
  type SessionToolList,
  type SessionToolName,
  toolInputJsonSchema,
} from '@sandcast/contracts';
import { type Principal, SandcastError } from '@sandcast/core';
import type { CheckpointsService } from '../checkpoints/checkpoints.service.ts';
import type { SandboxesService } from '../services/sandboxes.service.ts';
import type { FleetService } from '../services/sessions/fleet.service.ts';
import { decodeFile, encodeFile } from '../services/sessions/session-files.ts';
import type { SessionsService } from '../services/sessions/sessions.service.ts';
import { presentCheckpoint, presentFleetSandbox } from './present.ts';
import { parse } from './validate.ts';

export type SessionTools = ReturnType<typeof createSessionTools>;

type Run<N extends SessionToolName> = (sessionId: string, input: SessionToolInput<N>, actor: Principal) => Promise<unknown>;

/**
 * The one table of a session's tools: each name of `SESSION_TOOLS` (contracts: description and
 * input schema) bound to its service call. The REST routes, `/mcp` and `sandcast mcp` (through
 * the generic tool route) run these and nothing else.
 */
export function createSessionTools(deps: {
  sessions: SessionsService;
  sandboxes: SandboxesService;
  fleet: FleetService;
  checkpoints: CheckpointsService;
}) {
  const { sessions, sandboxes, fleet, checkpoints } = deps;

  const table: { [N in SessionToolName]: Run<N> } = {
    // The primary's tools, as the session routes run them: a mutation is checkpointed before the answer.
    exec: async (sessionId, input, actor) => {
      const sandbox = await sessions.useSandbox(sessionId, actor, { touch: false });
      const result = await sandboxes.exec(sandbox.id, input, actor);
      await checkpoints.afterMutation(sandbox.id, sandbox);
      return result;
    },
    read_file: async (sessionId, input, actor) => {
      const sandbox = await sessions.useSandbox(sessionId, actor, { touch: false });
      const { value, recovered } = await sandboxes.readFile(sandbox.id, input.path, actor);
      return { ...encodeFile(input.path, value), ...(recovered ? { recovered } : {}) };
    },
    write_file: async (sessionId, input, actor) => {
      const data = decodeFile(input);
      const sandbox = await sessions.useSandbox(sessionId, actor, { touch: false });
      const { recovered } = await sandboxes.writeFile(sandbox.id, input.path, data, input.mode, actor);
      await checkpoints.afterMutation(sandbox.id, sandbox);
      return { path: input.path, sizeBytes: data.length, ...(recovered ? { recovered } : {}) };
    },
    sandbox_create: async (sessionId, input, actor) => presentFleetSandbox(await fleet.create(sessionId, input, actor)),
    sandbox_list: async (sessionId, _input, actor) => ({ sandboxes: (await fleet.list(sessionId, actor)).map(presentFleetSandbox) }),
    sandbox_inspect: async (sessionId, input, actor) => presentFleetSandbox(await fleet.inspect(sessionId, input.sandboxId, actor)),
    sandbox_exec: (sessionId, { sandboxId, ...body }, actor) => fleet.exec(sessionId, sandboxId, body, actor),
    sandbox_read_file: async (sessionId, input, actor) => {
      const { value, recovered } = await fleet.readFile(sessionId, input.sandboxId, input.path, actor);
      return { ...encodeFile(input.path, value), ...(recovered ? { recovered } : {}) };
    },
    sandbox_write_file: (sessionId, input, actor) =>
      fleet.writeFile(sessionId, input.sandboxId, input.path, decodeFile(input), input.mode, actor),
    sandbox_checkpoint: async (sessionId, input, actor) => {
      const { checkpoint, currentCheckpointId, recovered } = await fleet.checkpoint(sessionId, input.sandboxId, actor);
      return { checkpoint: presentCheckpoint(checkpoint, currentCheckpointId), ...(recovered ? { recovered } : {}) };
    },
    sandbox_manage: async (sessionId, { sandboxId, ...body }, actor) =>
      presentFleetSandbox(await fleet.manage(sessionId, sandboxId, body, actor)),
  };

  /** The names this session may call now: its primary's tools if it has one, the fleet's if its agent may. */
  const available = async (sessionId: string, actor: Principal): Promise<SessionToolName[]> => {
    const session = await sessions.requireSession(sessionId, actor);
    const hasFleet = await fleet.requireFleetSession(sessionId, actor).then(
      () => true,
      () => false,
    );
    return SESSION_TOOL_NAMES.filter((name) => (SESSION_TOOLS[name].fleet ? hasFleet : session.primarySandboxId !== null));
  };

  return {
    available,

    /** The tools as MCP lists them: name, description, input as JSON Schema. */
    async list(sessionId: string, actor: Principal): Promise<SessionToolList> {
      return {
        tools: (await available(sessionId, actor)).map((name) => ({
          name,
          description: SESSION_TOOLS[name].description,
          inputSchema: toolInputJsonSchema(name),
        })),
      };
    },

    /** Runs one tool: the name checked against the table, the input against its schema, then the call. */
    async call(sessionId: string, name: string, input: unknown, actor: Principal): Promise<unknown> {
      if (!Object.hasOwn(table, name)) {
        throw new SandcastError(
          'not_found',
          `no tool named "${name.slice(0, 100)}"; GET /api/sessions/${sessionId}/tools lists this session's tools`,
        );
      }
      const tool = name as SessionToolName;
      const parsed = parse(SESSION_TOOLS[tool].input, input ?? {}) as SessionToolInput<SessionToolName>;
      return (table[tool] as Run<SessionToolName>)(sessionId, parsed, actor);
    },
  };
}
