import {
  AgentListSchema,
  AgentSchema,
  AgentVersionListSchema,
  API_PATHS,
  CheckpointAnswerSchema,
  CheckpointListSchema,
  type CreateAgentBody,
  type ExecBody,
  fillPath,
  RestoreCheckpointAnswerSchema,
  RestoreOperationLineSchema,
  SandboxSchema,
  SessionExecAnswerSchema,
  SessionFileSchema,
  SessionListSchema,
  SessionSandboxSchema,
  SessionSchema,
  type StartSessionBody,
  TerminalSessionTokenAnswerSchema,
  type UpdateAgentBody,
  WriteSessionFileAnswerSchema,
  type WriteSessionFileBody,
} from '@sandcast/contracts';
import type { z } from 'zod';
import { type ProgressListener, readOperationLines } from './base-images.ts';
import { SandcastApiError } from './errors.ts';
import type { ExecStream } from './exec-stream.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What these modules need of the client (kept apart to avoid an import cycle). */
export interface SessionRequester {
  request<T extends z.ZodType>(
    method: Method,
    path: string,
    schema: T,
    options?: { body?: unknown; query?: Record<string, string | number | undefined> },
  ): Promise<z.output<T>>;
  openExecStream(path: string, body: ExecBody, options: { signal?: AbortSignal | undefined }): ExecStream;
  raw(method: Method, path: string, options?: { body?: BodyInit; contentType?: string; accept?: string }): Promise<Response>;
}

/** Agents and their versions. */
export function agentsApi(client: SessionRequester) {
  return {
    list: async (options: { includeArchived?: boolean } = {}) =>
      (
        await client.request('GET', API_PATHS.agents, AgentListSchema, {
          query: { includeArchived: options.includeArchived ? 'true' : undefined },
        })
      ).agents,
    /** Finds an agent by id or by name, archived ones included. */
    resolve: async (idOrName: string) => {
      const all = (await client.request('GET', API_PATHS.agents, AgentListSchema, { query: { includeArchived: 'true' } })).agents;
      const found = all.find((a) => a.id === idOrName) ?? all.find((a) => a.name === idOrName);
      if (!found) throw new SandcastApiError({ status: 404, code: 'not_found', message: `no agent named or with id "${idOrName}"` });
      return found;
    },
    create: (body: CreateAgentBody) => client.request('POST', API_PATHS.agents, AgentSchema, { body }),
    get: (id: string) => client.request('GET', fillPath(API_PATHS.agent, { id }), AgentSchema),
    update: (id: string, body: UpdateAgentBody) => client.request('PATCH', fillPath(API_PATHS.agent, { id }), AgentSchema, { body }),
    /** Archives the agent: it starts no new sessions; its versions and sessions stay readable. */
    archive: (id: string) => client.request('DELETE', fillPath(API_PATHS.agent, { id }), AgentSchema),
    versions: async (id: string) =>
      (await client.request('GET', fillPath(API_PATHS.agentVersions, { id }), AgentVersionListSchema)).versions,
  };
}

/** Sessions and the tools of their primary sandbox, addressed by session id. */
export function sessionsApi(client: SessionRequester) {
  const at = (template: string, id: string) => fillPath(template, { id });
  return {
    list: async () => (await client.request('GET', API_PATHS.sessions, SessionListSchema)).sessions,
    start: (body: StartSessionBody) => client.request('POST', API_PATHS.sessions, SessionSchema, { body }),
    get: (id: string) => client.request('GET', at(API_PATHS.session, id), SessionSchema),
    /** Tears the compute down; the records stay. */
    end: (id: string) => client.request('POST', at(API_PATHS.sessionEnd, id), SessionSchema, { body: {} }),
    sandbox: (id: string) => client.request('GET', at(API_PATHS.sessionSandbox, id), SessionSandboxSchema),
    /** Stops the primary sandbox (it converges before the answer, which is the sandbox). */
    stopSandbox: (id: string) => client.request('POST', at(API_PATHS.sessionSandboxStop, id), SandboxSchema, { body: {} }),
    startSandbox: (id: string) => client.request('POST', at(API_PATHS.sessionSandboxStart, id), SandboxSchema, { body: {} }),
    /** Runs a command; `recovered` says the compute had to be replaced first (durability `checkpointed`). */
    exec: (id: string, body: ExecBody) => client.request('POST', at(API_PATHS.sessionExec, id), SessionExecAnswerSchema, { body }),
    execStream: (id: string, body: ExecBody, options: { signal?: AbortSignal } = {}) =>
      client.openExecStream(at(API_PATHS.sessionExec, id), body, options),
    readFile: (id: string, path: string) => client.request('GET', at(API_PATHS.sessionFiles, id), SessionFileSchema, { query: { path } }),
    writeFile: (id: string, path: string, body: WriteSessionFileBody) =>
      client.request('PUT', at(API_PATHS.sessionFiles, id), WriteSessionFileAnswerSchema, { body, query: { path } }),
    /** The attached checkpoints of the primary sandbox, newest first. */
    checkpoints: (id: string) => client.request('GET', at(API_PATHS.sessionCheckpoints, id), CheckpointListSchema),
    /** Checkpoints the workspace now. */
    checkpoint: (id: string) => client.request('POST', at(API_PATHS.sessionCheckpoints, id), CheckpointAnswerSchema, { body: {} }),
    /**
     * Rolls the workspace back to a checkpoint. With `onProgress` the answer streams progress
     * lines as the restore runs; the result is the same.
     */
    restore: async (id: string, checkpointId: string, options: { onProgress?: ProgressListener } = {}) => {
      const path = fillPath(API_PATHS.sessionCheckpointRestore, { id, checkpointId });
      if (!options.onProgress) return client.request('POST', path, RestoreCheckpointAnswerSchema, { body: {} });
      const response = await client.raw('POST', path, { body: '{}', contentType: 'application/json', accept: 'application/x-ndjson' });
      return readOperationLines(response, RestoreOperationLineSchema, (done) => done.result, options.onProgress);
    },
    /** A single-use connect token for the primary sandbox's browser terminal. */
    ptyToken: (id: string) => client.request('POST', at(API_PATHS.sessionPtyToken, id), TerminalSessionTokenAnswerSchema, { body: {} }),
  };
}

/** Stop and start a sandbox by hand (the reconciler moves it there). */
export function sandboxLifecycleApi(client: SessionRequester) {
  return {
    stop: (id: string) => client.request('POST', fillPath(API_PATHS.sandboxStop, { id }), SandboxSchema, { body: {} }),
    start: (id: string) => client.request('POST', fillPath(API_PATHS.sandboxStart, { id }), SandboxSchema, { body: {} }),
  };
}
