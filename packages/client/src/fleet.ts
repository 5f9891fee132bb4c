import {
  API_PATHS,
  CheckpointAnswerSchema,
  type CreateFleetSandboxBody,
  type ExecBody,
  FleetOverviewSchema,
  FleetSandboxListSchema,
  FleetSandboxSchema,
  fillPath,
  type ManageFleetSandboxBody,
  SessionExecAnswerSchema,
  SessionFileSchema,
  SessionToolAnswerSchema,
  SessionToolListSchema,
  WriteSessionFileAnswerSchema,
  type WriteSessionFileBody,
} from '@sandcast/contracts';
import type { SessionRequester } from './sessions.ts';

/** A session's resource sandboxes, addressed by their logical ids (`rsb_…`). */
export function fleetApi(client: SessionRequester) {
  const at = (template: string, id: string, rsbId?: string) => fillPath(template, rsbId === undefined ? { id } : { id, rsbId });
  return {
    list: async (sessionId: string) =>
      (await client.request('GET', at(API_PATHS.fleetSandboxes, sessionId), FleetSandboxListSchema)).sandboxes,
    create: (sessionId: string, body: CreateFleetSandboxBody = {}) =>
      client.request('POST', at(API_PATHS.fleetSandboxes, sessionId), FleetSandboxSchema, { body }),
    inspect: (sessionId: string, rsbId: string) => client.request('GET', at(API_PATHS.fleetSandbox, sessionId, rsbId), FleetSandboxSchema),
    exec: (sessionId: string, rsbId: string, body: ExecBody) =>
      client.request('POST', at(API_PATHS.fleetSandboxExec, sessionId, rsbId), SessionExecAnswerSchema, { body }),
    readFile: (sessionId: string, rsbId: string, path: string) =>
      client.request('GET', at(API_PATHS.fleetSandboxFiles, sessionId, rsbId), SessionFileSchema, { query: { path } }),
    writeFile: (sessionId: string, rsbId: string, path: string, body: WriteSessionFileBody) =>
      client.request('PUT', at(API_PATHS.fleetSandboxFiles, sessionId, rsbId), WriteSessionFileAnswerSchema, { body, query: { path } }),
    checkpoint: (sessionId: string, rsbId: string) =>
      client.request('POST', at(API_PATHS.fleetSandboxCheckpoints, sessionId, rsbId), CheckpointAnswerSchema, { body: {} }),
    manage: (sessionId: string, rsbId: string, body: ManageFleetSandboxBody) =>
      client.request('POST', at(API_PATHS.fleetSandboxManage, sessionId, rsbId), FleetSandboxSchema, { body }),
    /** Every sandbox of the instance with its attention flags (admin keys; the Fleet page). */
    overview: async (options: { includeDeleted?: boolean } = {}) =>
      (
        await client.request('GET', API_PATHS.fleet, FleetOverviewSchema, {
          query: { includeDeleted: options.includeDeleted ? 'true' : undefined },
        })
      ).sandboxes,
  };
}

/** A session's tools by name, as `sandcast mcp` proxies them: the list (JSON Schema inputs) and a call. */
export function sessionToolsApi(client: SessionRequester) {
  return {
    list: async (sessionId: string) =>
      (await client.request('GET', fillPath(API_PATHS.sessionTools, { id: sessionId }), SessionToolListSchema)).tools,
    call: async (sessionId: string, name: string, input: unknown) =>
      (
        await client.request('POST', fillPath(API_PATHS.sessionTool, { id: sessionId, name }), SessionToolAnswerSchema, {
          body: input ?? {},
        })
      ).result,
  };
}
