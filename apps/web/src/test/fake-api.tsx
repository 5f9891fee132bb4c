import { SandcastClient } from '@sandcast/client';
import type {
  AgentBody,
  CustomImageOverview,
  CustomImageTemplateBody,
  EnvironmentBody,
  EnvironmentRevisionBody,
  SandboxBody,
  SessionBody,
  SessionSandboxBody,
  SetupSessionBody,
} from '@sandcast/contracts';
import { DEFAULT_SANDBOX_SPEC, SETUP_SESSION_LABELS } from '@sandcast/contracts';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { MemoryRouter } from 'react-router';
import { Toaster } from 'sonner';
import { ClientProvider } from '../api/client-context.tsx';

/** One answer of the fake API: a status and a JSON body. */
export interface FakeAnswer {
  status?: number;
  body: unknown;
}

/** A handler may answer a Response of its own (a stream, say) instead of a JSON body. */
type Handler = (request: { method: string; path: string; body: unknown }) => FakeAnswer | Response | Promise<FakeAnswer | Response>;

/**
 * A SandcastClient whose fetch answers from `routes` ("METHOD /path" → answer). Every request is
 * recorded, so tests can assert what the UI sent. An unknown route is a 404 envelope.
 */
export function fakeClient(routes: Record<string, FakeAnswer | Handler>) {
  const calls: { method: string; path: string; body: unknown; headers: Record<string, string> }[] = [];
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    calls.push({ method, path: url.pathname + url.search, body, headers: (init?.headers ?? {}) as Record<string, string> });
    const route = routes[`${method} ${url.pathname}`];
    const answer: FakeAnswer | Response = !route
      ? { status: 404, body: { error: { code: 'not_found', message: `no route ${method} ${url.pathname}` } } }
      : typeof route === 'function'
        ? await route({ method, path: url.pathname, body })
        : route;
    if (answer instanceof Response) return answer;
    return new Response(JSON.stringify(answer.body), { status: answer.status ?? 200, headers: { 'content-type': 'application/json' } });
  };
  const client = new SandcastClient({ baseUrl: 'http://sandcast.test', fetch: fetchImpl as typeof fetch, csrfHeader: true });
  return { client, calls };
}

export function renderWithApi(ui: ReactNode, client: SandcastClient) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Number.POSITIVE_INFINITY } } });
  return render(
    <ClientProvider client={client}>
      <QueryClientProvider client={queryClient}>
        <MemoryRouter>{ui}</MemoryRouter>
        <Toaster />
      </QueryClientProvider>
    </ClientProvider>,
  );
}

const T0 = '2026-01-01T10:00:00.000Z';
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

export const environment: EnvironmentBody = {
  id: 'env_1',
  name: 'build',
  provider: 'daytona',
  config: {},
  spec: structuredClone(DEFAULT_SANDBOX_SPEC),
  connectionId: null,
  currentRevision: { id: 'rev_1', number: 1, createdAt: T0 },
  createdAt: T0,
  updatedAt: T0,
};

export function session(overrides: Partial<SetupSessionBody> = {}): SetupSessionBody {
  const status = overrides.status ?? 'waiting_for_user';
  return {
    id: 'sess_1',
    environmentId: 'env_1',
    environmentRevisionId: 'rev_1',
    provider: 'daytona',
    status,
    statusLabel: SETUP_SESSION_LABELS[status],
    sourceTemplateId: null,
    providerLeaseId: 'lease_1',
    connectionSummary: {},
    expiresAt: inAnHour(),
    finishedAt: null,
    failureReason: null,
    createdAt: T0,
    updatedAt: new Date().toISOString(),
    ...overrides,
  };
}

export function template(overrides: Partial<CustomImageTemplateBody> = {}): CustomImageTemplateBody {
  return {
    id: 'tpl_2',
    environmentId: 'env_1',
    provider: 'daytona',
    kind: 'snapshot',
    providerRef: 'sandcast-env_1-tpl_2',
    digest: null,
    sizeBytes: 52_428_800,
    status: 'active',
    refreshedFromTemplateId: null,
    setupSessionId: 'sess_1',
    capturedRevisionId: 'rev_1',
    capturedFingerprint: 'fp',
    linkedRevisionId: 'rev_1',
    linkedFingerprint: 'fp',
    metadata: {},
    failureReason: null,
    capturedAt: T0,
    lastUsedAt: null,
    supersededByTemplateId: null,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

export function overview(overrides: Partial<CustomImageOverview> = {}): CustomImageOverview {
  return {
    activeTemplate: null,
    activeTemplateMatchesConfig: null,
    activeTemplateDrift: null,
    activeSession: null,
    latestSession: null,
    capability: {
      state: 'template_setup',
      label: 'Template setup',
      message: null,
      interactiveSetup: true,
      templateCapture: true,
      connectionTypes: ['ssh'],
      templateRefKind: 'snapshot',
      changeTracking: true,
    },
    ...overrides,
  };
}

export function revision(overrides: Partial<EnvironmentRevisionBody> = {}): EnvironmentRevisionBody {
  return {
    id: 'rev_1',
    number: 1,
    createdAt: T0,
    environmentId: 'env_1',
    provider: 'daytona',
    config: {},
    spec: environment.spec,
    ...overrides,
  };
}

export function sandbox(overrides: Partial<SandboxBody> = {}): SandboxBody {
  return {
    id: 'sbx_1',
    environmentId: 'env_1',
    environmentRevisionId: 'rev_1',
    imageId: null,
    provider: 'fake',
    desiredStatus: 'ready',
    status: 'running',
    failureReason: null,
    sessionId: null,
    logicalId: null,
    durability: 'none',
    generation: 1,
    source: 'cold',
    forkedFromId: null,
    lastActivityAt: T0,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** An agent whose current version has `policy`. */
export function agent(policy: AgentBody['currentVersion']['sandboxPolicy'], overrides: Partial<AgentBody> = {}): AgentBody {
  return {
    id: 'agt_1',
    name: 'coder',
    displayName: null,
    description: null,
    currentVersion: { id: 'agv_1', agentId: 'agt_1', number: 1, sandboxPolicy: policy, capabilities: [], createdAt: T0 },
    archivedAt: null,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

export function agentSession(overrides: Partial<SessionBody> = {}): SessionBody {
  return {
    id: 'ses_1',
    agentId: 'agt_1',
    agentVersionId: 'agv_1',
    status: 'active',
    primarySandboxId: 'sbx_1',
    bindingName: 'default',
    createdAt: T0,
    endedAt: null,
    ...overrides,
  };
}

export function sessionSandbox(overrides: Partial<SessionSandboxBody> = {}): SessionSandboxBody {
  return {
    sandboxId: 'sbx_1',
    sessionId: 'ses_1',
    environmentId: 'env_1',
    environmentRevisionId: 'rev_1',
    environmentRevisionNumber: 1,
    imageId: null,
    bindingName: 'default',
    target: { provider: 'daytona' },
    containment: { network: 'deny', hosts: [], networkEnforced: true },
    durability: 'none',
    recoveryClass: 'the workspace is lost with the compute',
    lifecycle: { idleAfterSeconds: 180, idleAction: 'stop' },
    capabilities: { nativeProcesses: true, packages: true, pty: true, ports: false, portableCheckpoint: false, networkEnforced: true },
    desiredState: 'ready',
    observedState: 'running',
    failureReason: null,
    generation: 1,
    currentCheckpointId: null,
    lastActivityAt: T0,
    allowedActions: ['exec', 'files', 'terminal', 'stop', 'end'],
    ...overrides,
  };
}
