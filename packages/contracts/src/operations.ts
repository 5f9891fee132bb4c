import { z } from 'zod';
import { ActivityListSchema, ActivityQuerySchema } from './activity.ts';
import type { ApiOperation } from './api-operation.ts';
import { AuthSessionSchema, LoginBodySchema, LogoutAnswerSchema } from './auth.ts';
import { BridgeUpstreamListSchema, BridgeUpstreamSchema, PutBridgeUpstreamBodySchema } from './bridge-upstreams.ts';
import {
  ConnectionListSchema,
  ConnectionSchema,
  ConnectionTestAnswerSchema,
  CreateConnectionBodySchema,
  UpdateConnectionBodySchema,
} from './connections.ts';
import { ExecBodySchema, ExecResultSchema } from './custom-images.ts';
import {
  CreateEnvironmentBodySchema,
  EnvironmentListSchema,
  EnvironmentRevisionListSchema,
  EnvironmentSchema,
  UpdateEnvironmentAnswerSchema,
  UpdateEnvironmentBodySchema,
} from './environments.ts';
import { HealthResponseSchema } from './health.ts';
import { ApiKeyListSchema, ApiKeySchema, CreateApiKeyBodySchema, CreatedApiKeySchema, UpdateApiKeyBodySchema } from './keys.ts';
import { FLEET_OPERATIONS } from './operations-fleet.ts';
import { IMAGE_OPERATIONS } from './operations-images.ts';
import { AGENT_AND_SESSION_OPERATIONS } from './operations-sessions.ts';
import { API_PATHS } from './paths.ts';
import { OpenPortBodySchema, PORT_OWNERS, PortUrlSchema } from './ports.ts';
import {
  CreateSandboxBodySchema,
  ForkAnswerSchema,
  ForkSandboxBodySchema,
  SandboxListSchema,
  SandboxSchema,
  WarmPoolStateSchema,
} from './sandboxes.ts';
import { InstanceSettingsPatchSchema, InstanceSettingsSchema } from './settings.ts';
import { SandboxTargetListSchema } from './targets.ts';

export type { ApiOperation };

/** The four port operations, the same for every owner of ports (docs/decisions/0017-setup-session-ports.md). */
function portOperations(
  tag: ApiOperation['tag'],
  name: string,
  owner: { paths: { list: string; url: string; one: string }; item: z.ZodType; list: z.ZodType },
): ApiOperation[] {
  const { paths } = owner;
  return [
    { method: 'GET', path: paths.list, tag, summary: `The open ports of ${name}`, answer: owner.list },
    {
      method: 'POST',
      path: paths.list,
      tag,
      summary: `Open a port of ${name} as a URL`,
      body: OpenPortBodySchema,
      status: 201,
      answer: owner.item,
    },
    { method: 'GET', path: paths.url, tag, summary: "An open port's URL (with a fresh token for a private port)", answer: PortUrlSchema },
    { method: 'DELETE', path: paths.one, tag, summary: 'Close a port; its URL stops answering at once', answer: owner.item },
  ];
}

/** Every operation of the API; a test fails when a registered route is missing from it. */
export const API_OPERATIONS: readonly ApiOperation[] = [
  {
    method: 'GET',
    path: API_PATHS.health,
    tag: 'meta',
    summary: 'Server health, version, database kind and deployment mode',
    answer: HealthResponseSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.openApiDocument,
    tag: 'meta',
    summary: 'This OpenAPI document',
    answer: { mediaType: 'application/json', description: 'An OpenAPI 3.1 document.' },
  },
  {
    method: 'GET',
    path: API_PATHS.apiDocs,
    tag: 'meta',
    summary: 'Interactive API documentation',
    answer: { mediaType: 'text/html', description: 'A page.' },
  },
  {
    method: 'GET',
    path: API_PATHS.apiDocsAsset,
    tag: 'meta',
    summary: 'A script or style sheet of the documentation page',
    answer: { mediaType: 'application/octet-stream', description: 'One of a fixed set of files; anything else is 404.' },
  },
  {
    method: 'GET',
    path: API_PATHS.metrics,
    tag: 'meta',
    summary: 'Metrics in the Prometheus text format',
    answer: { mediaType: 'text/plain', description: 'Prometheus exposition format 0.0.4.' },
  },
  { method: 'GET', path: API_PATHS.authSession, tag: 'auth', summary: 'Who the caller is', answer: AuthSessionSchema },
  {
    method: 'POST',
    path: API_PATHS.authSession,
    tag: 'auth',
    summary: 'Log the web UI in with an API key (sets the session cookie)',
    body: LoginBodySchema,
    status: 201,
    answer: AuthSessionSchema,
  },
  { method: 'DELETE', path: API_PATHS.authSession, tag: 'auth', summary: "End the cookie's session", answer: LogoutAnswerSchema },
  { method: 'GET', path: API_PATHS.instanceSettings, tag: 'settings', summary: 'Instance settings', answer: InstanceSettingsSchema },
  {
    method: 'PATCH',
    path: API_PATHS.instanceSettings,
    tag: 'settings',
    summary: 'Change some instance settings',
    body: InstanceSettingsPatchSchema,
    answer: InstanceSettingsSchema,
  },
  { method: 'GET', path: API_PATHS.environments, tag: 'environments', summary: 'List environments', answer: EnvironmentListSchema },
  {
    method: 'POST',
    path: API_PATHS.environments,
    tag: 'environments',
    summary: 'Create an environment (revision 1)',
    body: CreateEnvironmentBodySchema,
    status: 201,
    answer: EnvironmentSchema,
  },
  { method: 'GET', path: API_PATHS.environment, tag: 'environments', summary: 'One environment', answer: EnvironmentSchema },
  {
    method: 'PATCH',
    path: API_PATHS.environment,
    tag: 'environments',
    summary: 'Edit an environment; a real change inserts a revision',
    body: UpdateEnvironmentBodySchema,
    answer: UpdateEnvironmentAnswerSchema,
  },
  { method: 'DELETE', path: API_PATHS.environment, tag: 'environments', summary: 'Delete an environment', answer: EnvironmentSchema },
  {
    method: 'GET',
    path: API_PATHS.environmentRevisions,
    tag: 'environments',
    summary: "An environment's revisions, newest first",
    answer: EnvironmentRevisionListSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.sandboxTargets,
    tag: 'environments',
    summary: 'Providers, their availability, capabilities and config schema',
    answer: SandboxTargetListSchema,
  },
  { method: 'GET', path: API_PATHS.connections, tag: 'environments', summary: 'List provider connections', answer: ConnectionListSchema },
  {
    method: 'POST',
    path: API_PATHS.connections,
    tag: 'environments',
    summary: 'Create a provider connection (its secrets are write-only)',
    body: CreateConnectionBodySchema,
    status: 201,
    answer: ConnectionSchema,
  },
  { method: 'GET', path: API_PATHS.connection, tag: 'environments', summary: 'One provider connection', answer: ConnectionSchema },
  {
    method: 'PATCH',
    path: API_PATHS.connection,
    tag: 'environments',
    summary: 'Edit a provider connection',
    body: UpdateConnectionBodySchema,
    answer: ConnectionSchema,
  },
  {
    method: 'DELETE',
    path: API_PATHS.connection,
    tag: 'environments',
    summary: 'Delete a provider connection no environment uses',
    answer: ConnectionSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.bridgeUpstreams,
    tag: 'settings',
    summary: "The host bridge's upstreams (their credentials never answered)",
    answer: BridgeUpstreamListSchema,
  },
  {
    method: 'PUT',
    path: API_PATHS.bridgeUpstream,
    tag: 'settings',
    summary: 'Create or replace a bridge upstream (its credential is write-only; left out, the stored one stays)',
    body: PutBridgeUpstreamBodySchema,
    answer: BridgeUpstreamSchema,
  },
  {
    method: 'DELETE',
    path: API_PATHS.bridgeUpstream,
    tag: 'settings',
    summary: 'Delete a bridge upstream; sandboxes stop reaching it at once',
    answer: BridgeUpstreamSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.connectionTest,
    tag: 'environments',
    summary: 'Check a connection reaches its vendor with its credentials',
    answer: ConnectionTestAnswerSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.activity,
    tag: 'activity',
    summary: 'Recent activity, newest first',
    query: ActivityQuerySchema,
    answer: ActivityListSchema,
  },
  { method: 'GET', path: API_PATHS.apiKeys, tag: 'keys', summary: 'API keys (never the secrets)', answer: ApiKeyListSchema },
  {
    method: 'POST',
    path: API_PATHS.apiKeys,
    tag: 'keys',
    summary: 'Create an API key; its secret is shown only here',
    body: CreateApiKeyBodySchema,
    status: 201,
    answer: CreatedApiKeySchema,
  },
  {
    method: 'PATCH',
    path: API_PATHS.apiKey,
    tag: 'keys',
    summary: 'Set which agents an agent key may start sessions for',
    body: UpdateApiKeyBodySchema,
    answer: z.object({ key: ApiKeySchema }),
  },
  { method: 'DELETE', path: API_PATHS.apiKey, tag: 'keys', summary: 'Revoke an API key', answer: z.object({ key: ApiKeySchema }) },
  ...IMAGE_OPERATIONS,
  { method: 'GET', path: API_PATHS.sandboxes, tag: 'sandboxes', summary: 'Sandboxes, newest first', answer: SandboxListSchema },
  {
    method: 'POST',
    path: API_PATHS.sandboxes,
    tag: 'sandboxes',
    summary: "Create a sandbox from an environment's active image",
    body: CreateSandboxBodySchema,
    status: 201,
    answer: SandboxSchema,
  },
  { method: 'GET', path: API_PATHS.sandbox, tag: 'sandboxes', summary: 'One sandbox', answer: SandboxSchema },
  { method: 'DELETE', path: API_PATHS.sandbox, tag: 'sandboxes', summary: 'Delete a sandbox', answer: SandboxSchema },
  {
    method: 'POST',
    path: API_PATHS.sandboxExec,
    tag: 'sandboxes',
    summary: 'Run a command in a sandbox',
    body: ExecBodySchema,
    answer: ExecResultSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.sandboxStop,
    tag: 'sandboxes',
    summary: 'Stop a sandbox, keeping its disk (converges before answering)',
    answer: SandboxSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.sandboxStart,
    tag: 'sandboxes',
    summary: 'Start a stopped sandbox again with its files (converges before answering)',
    answer: SandboxSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.sandboxFork,
    tag: 'sandboxes',
    summary: 'Fork a running sandbox into 1-16 new ones with its files at this moment (processes are not copied)',
    body: ForkSandboxBodySchema,
    status: 201,
    answer: ForkAnswerSchema,
  },
  {
    method: 'GET',
    path: API_PATHS.environmentWarmPool,
    tag: 'sandboxes',
    summary: "An environment's warm pool: size, members ready and booting, the last refill error",
    answer: WarmPoolStateSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.sessionSandboxStop,
    tag: 'sandboxes',
    summary: "Stop a session's sandbox, keeping its disk",
    answer: SandboxSchema,
  },
  {
    method: 'POST',
    path: API_PATHS.sessionSandboxStart,
    tag: 'sandboxes',
    summary: "Start a session's stopped sandbox again",
    answer: SandboxSchema,
  },
  ...portOperations('sandboxes', 'a sandbox', PORT_OWNERS.sandbox),
  ...portOperations('custom images', "a setup session's sandbox", PORT_OWNERS.setup),
  ...AGENT_AND_SESSION_OPERATIONS,
  ...FLEET_OPERATIONS,
];
