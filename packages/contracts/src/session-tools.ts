import { z } from 'zod';
import { ExecBodySchema } from './custom-images.ts';
import { SandboxPathSchema } from './exec-limits.ts';
import { CreateFleetSandboxBodySchema, FleetSandboxIdSchema, ManageFleetSandboxBodySchema } from './fleet.ts';
import { WriteSessionFileBodySchema } from './sessions.ts';

const path = z.strictObject({ path: SandboxPathSchema });
const sandboxId = z.strictObject({ sandboxId: FleetSandboxIdSchema });
const writeFile = z.strictObject({ path: SandboxPathSchema, ...WriteSessionFileBodySchema.shape });

/**
 * The tools of a session, by name: what each does and the input it takes. The server binds each
 * to a service call once (`apps/server/src/tools/session-tools.ts`); REST routes, the MCP server
 * at `/mcp` and `sandcast mcp` (through `POST /api/sessions/:id/tools/:name`) all run that table.
 * `fleet` tools need the agent's `sandbox_fleet` capability; the others need a primary sandbox.
 */
export const SESSION_TOOLS = {
  exec: {
    fleet: false,
    description: "Run a command in the session's primary sandbox and answer its exit code and output.",
    input: ExecBodySchema,
  },
  read_file: {
    fleet: false,
    description: "Read a file of the session's primary sandbox (UTF-8 text, else base64).",
    input: path,
  },
  write_file: {
    fleet: false,
    description: "Write a file of the session's primary sandbox (content as UTF-8, or base64 with encoding).",
    input: writeFile,
  },
  sandbox_create: {
    fleet: true,
    description:
      "Create a resource sandbox beside the primary one, from a binding of the agent's policy (use: a binding or environment name; default the policy's default). Answers its id (rsb_…).",
    input: CreateFleetSandboxBodySchema,
  },
  sandbox_list: {
    fleet: true,
    description: "List this session's resource sandboxes.",
    input: z.strictObject({}),
  },
  sandbox_inspect: {
    fleet: true,
    description: 'Describe one resource sandbox of this session: state, generation, binding, durability.',
    input: sandboxId,
  },
  sandbox_exec: {
    fleet: true,
    description: 'Run a command in a resource sandbox of this session.',
    input: z.strictObject({ sandboxId: FleetSandboxIdSchema, ...ExecBodySchema.shape }),
  },
  sandbox_read_file: {
    fleet: true,
    description: 'Read a file of a resource sandbox of this session.',
    input: z.strictObject({ sandboxId: FleetSandboxIdSchema, path: SandboxPathSchema }),
  },
  sandbox_write_file: {
    fleet: true,
    description: 'Write a file of a resource sandbox of this session.',
    input: z.strictObject({ sandboxId: FleetSandboxIdSchema, ...writeFile.shape }),
  },
  sandbox_checkpoint: {
    fleet: true,
    description: "Checkpoint a resource sandbox's workspace (durability checkpointed).",
    input: sandboxId,
  },
  sandbox_manage: {
    fleet: true,
    description: 'Stop, start, delete or restore (to a checkpoint) a resource sandbox of this session.',
    input: z.strictObject({ sandboxId: FleetSandboxIdSchema, ...ManageFleetSandboxBodySchema.shape }),
  },
} as const;

export type SessionToolName = keyof typeof SESSION_TOOLS;
export const SESSION_TOOL_NAMES = Object.keys(SESSION_TOOLS) as SessionToolName[];
export type SessionToolInput<N extends SessionToolName> = z.output<(typeof SESSION_TOOLS)[N]['input']>;

/** A tool as listed: its input as JSON Schema (what MCP clients are handed). */
export const SessionToolListSchema = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      inputSchema: z.looseObject({ type: z.literal('object') }),
    }),
  ),
});
export type SessionToolList = z.infer<typeof SessionToolListSchema>;

/** The header that names the session whose tools `/mcp` serves. */
export const MCP_SESSION_HEADER = 'sandcast-session';

/** `POST /api/sessions/:id/tools/:name`: the tool's input as the body, its result as the answer. */
export const SessionToolAnswerSchema = z.object({ result: z.unknown() });

/** The JSON Schema of a tool's input (refinements stay server-side; the server checks them). */
export function toolInputJsonSchema(name: SessionToolName): { type: 'object'; [key: string]: unknown } {
  const schema = z.toJSONSchema(SESSION_TOOLS[name].input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema: _omitted, ...rest } = schema;
  return { ...rest, type: 'object' };
}

/**
 * What a refused or failed tool call tells the agent (both MCP transports): `code: message` when
 * the error carries a code, a plain sentence otherwise — never a stack.
 */
export function toolRefusalText(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && 'message' in error) {
    return `${String((error as { code: unknown }).code)}: ${String((error as { message: unknown }).message)}`;
  }
  return 'internal: the tool failed unexpectedly; the server log says why';
}
