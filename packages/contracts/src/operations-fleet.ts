import { CheckpointAnswerSchema } from './checkpoints.ts';
import { ExecBodySchema } from './custom-images.ts';
import {
  CreateFleetSandboxBodySchema,
  FleetOverviewQuerySchema,
  FleetOverviewSchema,
  FleetSandboxListSchema,
  FleetSandboxSchema,
  ManageFleetSandboxBodySchema,
} from './fleet.ts';
import { API_PATHS } from './paths.ts';
import { SessionToolAnswerSchema, SessionToolListSchema } from './session-tools.ts';
import {
  SessionExecAnswerSchema,
  SessionFileQuerySchema,
  SessionFileSchema,
  WriteSessionFileAnswerSchema,
  WriteSessionFileBodySchema,
} from './sessions.ts';

const jsonRpc = {
  mediaType: 'application/json',
  description: 'One JSON-RPC message of the Model Context Protocol (streamable HTTP, stateless).',
};

/** The operations of a session's tools (generic and fleet), the fleet overview and `/mcp`; API_OPERATIONS includes them. */
export const FLEET_OPERATIONS = [
  {
    method: 'GET',
    path: API_PATHS.sessionTools,
    tag: 'fleet',
    summary: 'The tools this session may use now, their inputs as JSON Schema',
    answer: SessionToolListSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.sessionTool,
    tag: 'fleet',
    summary: "Run one of the session's tools by name (the body is its input)",
    body: { mediaType: 'application/json', description: "The tool's input (GET …/tools gives its JSON Schema)." },
    answer: SessionToolAnswerSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.fleetSandboxes,
    tag: 'fleet',
    summary: "The session's resource sandboxes (sandbox_list)",
    answer: FleetSandboxListSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.fleetSandboxes,
    tag: 'fleet',
    summary: 'Create a resource sandbox from a binding of the agent (sandbox_create)',
    body: CreateFleetSandboxBodySchema,
    status: 201,
    answer: FleetSandboxSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.fleetSandbox,
    tag: 'fleet',
    summary: 'One resource sandbox (sandbox_inspect)',
    answer: FleetSandboxSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.fleetSandboxExec,
    tag: 'fleet',
    summary: 'Run a command in a resource sandbox (sandbox_exec)',
    body: ExecBodySchema,
    answer: SessionExecAnswerSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.fleetSandboxFiles,
    tag: 'fleet',
    summary: 'Read a file of a resource sandbox (sandbox_read_file)',
    query: SessionFileQuerySchema,
    answer: SessionFileSchema,
  },
  {
    method: 'PUT',
    path: API_PATHS.fleetSandboxFiles,
    tag: 'fleet',
    summary: 'Write a file of a resource sandbox (sandbox_write_file)',
    query: SessionFileQuerySchema,
    body: WriteSessionFileBodySchema,
    answer: WriteSessionFileAnswerSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.fleetSandboxCheckpoints,
    tag: 'fleet',
    summary: "Checkpoint a resource sandbox's workspace (sandbox_checkpoint)",
    status: 201,
    answer: CheckpointAnswerSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.fleetSandboxManage,
    tag: 'fleet',
    summary: 'Stop, start, delete or restore a resource sandbox (sandbox_manage)',
    body: ManageFleetSandboxBodySchema,
    answer: FleetSandboxSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.fleet,
    tag: 'fleet',
    summary: 'Every sandbox with its session, pinned revision, state and attention flags (the Fleet page)',
    query: FleetOverviewQuerySchema,
    answer: FleetOverviewSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.mcp,
    tag: 'fleet',
    summary: "The MCP server over the session's tools (session in the Sandcast-Session header)",
    body: jsonRpc,
    answer: jsonRpc,
  },
  {
    method: 'GET',
    path: API_PATHS.mcp,
    tag: 'fleet',
    summary: 'Refused with 405: the MCP server is stateless and opens no server stream',
    answer: { mediaType: 'application/json', description: 'An error envelope (method_not_allowed).' },
  },
  {
    method: 'DELETE',
    path: API_PATHS.mcp,
    tag: 'fleet',
    summary: 'Refused with 405: the MCP server is stateless and has no session to end',
    answer: { mediaType: 'application/json', description: 'An error envelope (method_not_allowed).' },
  },
] as const;
