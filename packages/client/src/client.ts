import {
  ActivityListSchema,
  API_PATHS,
  ApiKeyListSchema,
  ApiKeySchema,
  AuthSessionSchema,
  CancelSetupAnswerSchema,
  type CreateApiKeyBody,
  CreatedApiKeySchema,
  type CreateEnvironmentBody,
  type CreateSandboxBody,
  CSRF_HEADER,
  CustomImageOverviewSchema,
  CustomImageTemplateListSchema,
  DisableAnswerSchema,
  EnvironmentListSchema,
  EnvironmentRevisionListSchema,
  EnvironmentSchema,
  EXEC_STREAM_CONTENT_TYPE,
  type ExecBody,
  ExecResultSchema,
  FinishSetupAnswerSchema,
  ForkAnswerSchema,
  fillPath,
  HealthResponseSchema,
  type InstanceSettingsPatchBody,
  InstanceSettingsSchema,
  LogoutAnswerSchema,
  ProbeAnswerSchema,
  RelinkAnswerSchema,
  RollbackAnswerSchema,
  SandboxListSchema,
  SandboxSchema,
  SandboxTargetListSchema,
  SetupChangesSchema,
  SetupSessionAnswerSchema,
  type StartSetupSessionBody,
  TerminalSessionTokenAnswerSchema,
  UpdateEnvironmentAnswerSchema,
  type UpdateEnvironmentBody,
  WarmPoolStateSchema,
} from '@sandcast/contracts';
import { z } from 'zod';
import { baseImagesApi } from './base-images.ts';
import { bridgeUpstreamsApi } from './bridge-upstreams.ts';
import { connectionsApi } from './connections.ts';
import { apiErrorFromAnswer, SandcastApiError, SandcastConnectionError } from './errors.ts';
import { ExecStream } from './exec-stream.ts';
import { fleetApi, sessionToolsApi } from './fleet.ts';
import { portsApi } from './ports.ts';
import { agentsApi, sandboxLifecycleApi, sessionsApi } from './sessions.ts';

export interface ClientOptions {
  /** e.g. http://127.0.0.1:7420 */
  baseUrl: string;
  /** Bearer API key; not needed against a local_trusted server. */
  apiKey?: string | undefined;
  /** Send the browser's cookies instead of a key (the web UI). Default: false. */
  credentials?: 'include' | 'same-origin' | undefined;
  /**
   * Send the header that cookie-authenticated mutating requests need (the web UI sets this with
   * `credentials`). Default: false.
   */
  csrfHeader?: boolean | undefined;
  fetch?: typeof fetch | undefined;
  /**
   * How JSON requests travel; default: `fetch`. Node callers may pass `createNodeTransport()`
   * (`@sandcast/client/node`) to skip fetch's per-request stream machinery. Streams and archives
   * always use `fetch`.
   */
  transport?: JsonTransport | undefined;
}

/** One JSON request and its answer's status and text; a failure to connect rejects. */
export type JsonTransport = (request: {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}) => Promise<{ status: number; text: string }>;

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Typed access to the Sandcast REST API. Every answer is checked against its contract schema. */
export class SandcastClient {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly credentials: ClientOptions['credentials'];
  private readonly csrfHeader: boolean;
  private readonly fetchImpl: typeof fetch;
  private readonly transport: JsonTransport;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.credentials = options.credentials;
    this.csrfHeader = options.csrfHeader ?? false;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.transport = options.transport ?? this.viaFetch;
  }

  private readonly viaFetch: JsonTransport = async ({ method, url, headers, body }) => {
    const response = await this.fetchImpl(url, { method, headers, body, ...(this.credentials ? { credentials: this.credentials } : {}) });
    return { status: response.status, text: await response.text() };
  };

  /** Sends one request and parses the answer with `schema`; an error answer throws SandcastApiError. */
  async request<T extends z.ZodType>(
    method: Method,
    path: string,
    schema: T,
    options: { body?: unknown; query?: Record<string, string | number | undefined> } = {},
  ): Promise<z.output<T>> {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (this.csrfHeader && method !== 'GET') headers[CSRF_HEADER] = '1';
    let answer: { status: number; text: string };
    try {
      const body = options.body === undefined ? undefined : JSON.stringify(options.body);
      answer = await this.transport({ method, url: url.toString(), headers, body });
    } catch (error) {
      throw new SandcastConnectionError(this.baseUrl, error);
    }
    const { status, text } = answer;
    if (status < 200 || status > 299) throw apiErrorFromAnswer(status, text);
    return schema.parse(text ? safeJson(text) : undefined);
  }

  /**
   * Sends a request whose body or answer is not JSON (archives, NDJSON progress). Error answers
   * still throw SandcastApiError; a successful Response is returned unread.
   */
  async raw(
    method: Method,
    path: string,
    options: { body?: BodyInit; contentType?: string; accept?: string; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (options.contentType) headers['content-type'] = options.contentType;
    if (options.accept) headers.accept = options.accept;
    if (this.csrfHeader && method !== 'GET') headers[CSRF_HEADER] = '1';
    let response: Response;
    try {
      response = await this.fetchImpl(this.baseUrl + path, {
        method,
        headers,
        body: options.body,
        ...(options.signal ? { signal: options.signal } : {}),
        // Streams go up as they are read.
        ...(options.body instanceof ReadableStream ? { duplex: 'half' } : {}),
        ...(this.credentials ? { credentials: this.credentials } : {}),
      } as RequestInit);
    } catch (error) {
      throw new SandcastConnectionError(this.baseUrl, error);
    }
    if (!response.ok) throw apiErrorFromAnswer(response.status, await response.text());
    return response;
  }

  /** Starts a command whose output arrives as it runs (NDJSON frames); see `ExecStream`. */
  openExecStream(path: string, body: ExecBody, options: { signal?: AbortSignal | undefined }): ExecStream {
    const controller = new AbortController();
    options.signal?.addEventListener('abort', () => controller.abort(), { once: true });
    return new ExecStream(
      () =>
        this.raw('POST', path, {
          body: JSON.stringify(body),
          contentType: 'application/json',
          accept: EXEC_STREAM_CONTENT_TYPE,
          signal: controller.signal,
        }),
      controller,
    );
  }

  /** Base images a provider keeps itself (the local provider). */
  readonly baseImages = baseImagesApi(this);

  readonly agents = agentsApi(this);

  /** Provider connections: the accounts connected providers (Daytona) run sandboxes in. */
  readonly connections = connectionsApi(this);
  /** The host bridge's upstreams: services sandboxes reach with a credential added on the host. */
  readonly bridgeUpstreams = bridgeUpstreamsApi(this);

  /** Sessions and their primary sandbox's tools. */
  readonly sessions = sessionsApi(this);
  /** Resource sandboxes of a session (agents with `sandbox_fleet`), and the instance's overview. */
  readonly fleet = fleetApi(this);
  /** A session's tools by name (what `sandcast mcp` proxies). */
  readonly sessionTools = sessionToolsApi(this);

  health() {
    return this.request('GET', API_PATHS.health, HealthResponseSchema);
  }

  /** Web UI sessions: log in with an API key to get an httpOnly session cookie. */
  readonly auth = {
    session: () => this.request('GET', API_PATHS.authSession, AuthSessionSchema),
    login: (apiKey: string) => this.request('POST', API_PATHS.authSession, AuthSessionSchema, { body: { apiKey } }),
    logout: () => this.request('DELETE', API_PATHS.authSession, LogoutAnswerSchema),
  };

  readonly settings = {
    get: () => this.request('GET', API_PATHS.instanceSettings, InstanceSettingsSchema),
    update: (patch: InstanceSettingsPatchBody) =>
      this.request('PATCH', API_PATHS.instanceSettings, InstanceSettingsSchema, { body: patch }),
  };

  readonly environments = {
    list: async () => (await this.request('GET', API_PATHS.environments, EnvironmentListSchema)).environments,
    create: (body: CreateEnvironmentBody) => this.request('POST', API_PATHS.environments, EnvironmentSchema, { body }),
    get: (id: string) => this.request('GET', fillPath(API_PATHS.environment, { id }), EnvironmentSchema),
    update: (id: string, body: UpdateEnvironmentBody) =>
      this.request('PATCH', fillPath(API_PATHS.environment, { id }), UpdateEnvironmentAnswerSchema, { body }),
    delete: (id: string) => this.request('DELETE', fillPath(API_PATHS.environment, { id }), EnvironmentSchema),
    revisions: async (id: string) =>
      (await this.request('GET', fillPath(API_PATHS.environmentRevisions, { id }), EnvironmentRevisionListSchema)).revisions,
    /** Finds an environment by id or by name. */
    resolve: async (idOrName: string) => {
      const all = await this.environments.list();
      const found = all.find((e) => e.id === idOrName) ?? all.find((e) => e.name === idOrName);
      if (!found) throw new SandcastApiError({ status: 404, code: 'not_found', message: `no environment named or with id "${idOrName}"` });
      return found;
    },
  };

  /** Custom images of an environment and the setup sessions that make them. */
  readonly customImages = {
    overview: (environmentId: string) =>
      this.request('GET', fillPath(API_PATHS.customImageOverview, { environmentId }), CustomImageOverviewSchema),
    history: async (environmentId: string) =>
      (await this.request('GET', fillPath(API_PATHS.customImageTemplates, { environmentId }), CustomImageTemplateListSchema)).templates,
    startSetup: (environmentId: string, body: StartSetupSessionBody = {}) =>
      this.request('POST', fillPath(API_PATHS.setupSessions, { environmentId }), SetupSessionAnswerSchema, { body }),
    getSetup: (sessionId: string) => this.request('GET', fillPath(API_PATHS.setupSession, { sessionId }), SetupSessionAnswerSchema),
    changes: (sessionId: string) => this.request('GET', fillPath(API_PATHS.setupSessionChanges, { sessionId }), SetupChangesSchema),
    /** Runs a command in the setup sandbox; the answer holds its output up to the server's cap per stream. */
    exec: (sessionId: string, body: ExecBody) =>
      this.request('POST', fillPath(API_PATHS.setupSessionExec, { sessionId }), ExecResultSchema, { body }),
    /** Runs a command in the setup sandbox, its output arriving as it is produced. */
    execStream: (sessionId: string, body: ExecBody, options: { signal?: AbortSignal } = {}) =>
      this.openExecStream(fillPath(API_PATHS.setupSessionExec, { sessionId }), body, options),
    finish: (sessionId: string, body: { metadata?: Record<string, unknown> } = {}) =>
      this.request('POST', fillPath(API_PATHS.setupSessionFinish, { sessionId }), FinishSetupAnswerSchema, { body }),
    cancel: (sessionId: string, body: { reason?: string } = {}) =>
      this.request('POST', fillPath(API_PATHS.setupSessionCancel, { sessionId }), CancelSetupAnswerSchema, { body }),
    /** A single-use connect token for the setup session's browser terminal; pass it to `openTerminal`. */
    terminalSessionToken: (sessionId: string) =>
      this.request('POST', fillPath(API_PATHS.terminalSessionToken, { sessionId }), TerminalSessionTokenAnswerSchema, { body: {} }),
    rollback: (environmentId: string) =>
      this.request('POST', fillPath(API_PATHS.customImageRollback, { environmentId }), RollbackAnswerSchema, { body: {} }),
    relink: (environmentId: string, body: { confirmBootSourceDrift?: boolean } = {}) =>
      this.request('POST', fillPath(API_PATHS.customImageRelink, { environmentId }), RelinkAnswerSchema, { body }),
    disable: (environmentId: string, options: { deleteProviderTemplate?: boolean } = {}) =>
      this.request('DELETE', fillPath(API_PATHS.customImageOverview, { environmentId }), DisableAnswerSchema, {
        query: { deleteProviderTemplate: options.deleteProviderTemplate ? 'true' : undefined },
      }),
    probe: (environmentId: string) =>
      this.request('POST', fillPath(API_PATHS.environmentProbe, { environmentId }), ProbeAnswerSchema, { body: {} }),
    /** The ports of the setup session's sandbox served as URLs, as a sandbox's are. */
    ports: portsApi(this, 'setup'),
  };

  readonly sandboxes = {
    list: async () => (await this.request('GET', API_PATHS.sandboxes, SandboxListSchema)).sandboxes,
    create: (body: CreateSandboxBody) => this.request('POST', API_PATHS.sandboxes, SandboxSchema, { body }),
    get: (id: string) => this.request('GET', fillPath(API_PATHS.sandbox, { id }), SandboxSchema),
    delete: (id: string) => this.request('DELETE', fillPath(API_PATHS.sandbox, { id }), SandboxSchema),
    /** Runs a command; the answer holds its output up to the server's cap per stream (see `truncated`). */
    exec: (id: string, body: ExecBody) => this.request('POST', fillPath(API_PATHS.sandboxExec, { id }), ExecResultSchema, { body }),
    /** Runs a command, its output arriving as it is produced. */
    execStream: (id: string, body: ExecBody, options: { signal?: AbortSignal } = {}) =>
      this.openExecStream(fillPath(API_PATHS.sandboxExec, { id }), body, options),
    /** `count` new sandboxes with this one's files at this moment (processes are not copied). */
    fork: (id: string, count: number) =>
      this.request('POST', fillPath(API_PATHS.sandboxFork, { id }), ForkAnswerSchema, { body: { count } }),
    /** An environment's warm pool: size, members ready and booting, the last refill error. */
    warmPool: (environmentId: string) =>
      this.request('GET', fillPath(API_PATHS.environmentWarmPool, { environmentId }), WarmPoolStateSchema),
    ...sandboxLifecycleApi(this),
    /** A sandbox's ports served as URLs; a private port's URL carries an expiring token. */
    ports: portsApi(this, 'sandbox'),
  };

  async targets() {
    return (await this.request('GET', API_PATHS.sandboxTargets, SandboxTargetListSchema)).targets;
  }

  async activity(query: { limit?: number; action?: string } = {}) {
    return (await this.request('GET', API_PATHS.activity, ActivityListSchema, { query })).activity;
  }

  readonly keys = {
    create: (body: CreateApiKeyBody) => this.request('POST', API_PATHS.apiKeys, CreatedApiKeySchema, { body }),
    list: async () => (await this.request('GET', API_PATHS.apiKeys, ApiKeyListSchema)).keys,
    revoke: async (id: string) => (await this.request('DELETE', fillPath(API_PATHS.apiKey, { id }), z.object({ key: ApiKeySchema }))).key,
    /** Which agents an agent key may start sessions for. */
    setAllowedAgents: async (id: string, allowedAgentIds: string[]) =>
      (await this.request('PATCH', fillPath(API_PATHS.apiKey, { id }), z.object({ key: ApiKeySchema }), { body: { allowedAgentIds } })).key,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
