export type { ActivityEntry } from './activity.ts';
export { ActivityEntrySchema, ActivityListSchema, ActivityQuerySchema } from './activity.ts';
export type { AgentBody, AgentVersionBody, CreateAgentBody, SandboxPolicyBody, UpdateAgentBody } from './agents.ts';
export {
  AgentListQuerySchema,
  AgentListSchema,
  AgentSchema,
  AgentVersionListSchema,
  AgentVersionSchema,
  CreateAgentBodySchema,
  SandboxBindingSchema,
  SandboxPolicySchema,
  UpdateAgentBodySchema,
} from './agents.ts';
export type { AuthSession, LoginBody } from './auth.ts';
export { AuthSessionSchema, CSRF_HEADER, LoginBodySchema, LogoutAnswerSchema, UI_SESSION_COOKIE } from './auth.ts';
export type { BaseImage, BuildBaseImageBody, ImageOperationLine } from './base-images.ts';
export {
  BaseImageListSchema,
  BaseImageSchema,
  BuildBaseImageBodySchema,
  ImageOperationLineSchema,
  ImportBaseImageQuerySchema,
} from './base-images.ts';
export type { BridgeUpstreamBody, PutBridgeUpstreamBody } from './bridge-upstreams.ts';
export {
  BridgeUpstreamListSchema,
  BridgeUpstreamNameSchema,
  BridgeUpstreamSchema,
  PutBridgeUpstreamBodySchema,
} from './bridge-upstreams.ts';
export type { CheckpointBody, RestoreCheckpointAnswer, RestoreOperationLine, SandboxRecovered } from './checkpoints.ts';
export {
  CheckpointAnswerSchema,
  CheckpointListSchema,
  CheckpointParamsSchema,
  CheckpointSchema,
  CreateCheckpointBodySchema,
  RestoreCheckpointAnswerSchema,
  RestoreOperationLineSchema,
  SandboxRecoveredSchema,
} from './checkpoints.ts';
export type {
  ConnectionBody,
  ConnectionTestAnswer,
  CreateConnectionBody,
  UpdateConnectionBody,
} from './connections.ts';
export {
  ConnectionListSchema,
  ConnectionRequirementSchema,
  ConnectionSchema,
  ConnectionTestAnswerSchema,
  CreateConnectionBodySchema,
  UpdateConnectionBodySchema,
} from './connections.ts';
export type {
  ConnectionPayload,
  CustomImageCapability,
  CustomImageOverview,
  CustomImageTemplateBody,
  ExecBody,
  ExecResultBody,
  ProbeAnswer,
  SetupChanges,
  SetupSessionBody,
  StartSetupSessionBody,
} from './custom-images.ts';
export {
  CAPABILITY_STATES,
  CancelSetupAnswerSchema,
  CancelSetupBodySchema,
  ConnectionPayloadSchema,
  CustomImageCapabilitySchema,
  CustomImageOverviewSchema,
  CustomImageTemplateListSchema,
  CustomImageTemplateSchema,
  DisableAnswerSchema,
  DisableQuerySchema,
  ExecBodySchema,
  ExecResultSchema,
  FileChangeSchema,
  FinishSetupAnswerSchema,
  FinishSetupBodySchema,
  ProbeAnswerSchema,
  RELINK_CLASSIFICATIONS,
  RelinkAnswerSchema,
  RelinkBodySchema,
  RollbackAnswerSchema,
  SETUP_SESSION_LABELS,
  SetupChangesSchema,
  SetupSessionAnswerSchema,
  SetupSessionSchema,
  StartSetupSessionBodySchema,
} from './custom-images.ts';
export type {
  CreateEnvironmentBody,
  EnvironmentBody,
  EnvironmentRevisionBody,
  UpdateEnvironmentBody,
} from './environments.ts';
export {
  CreateEnvironmentBodySchema,
  EnvironmentListSchema,
  EnvironmentRevisionListSchema,
  EnvironmentRevisionSchema,
  EnvironmentSchema,
  SecretPlaceholderSchema,
  UpdateEnvironmentAnswerSchema,
  UpdateEnvironmentBodySchema,
} from './environments.ts';
export type { ErrorCode, ErrorEnvelope, FieldIssue } from './errors.ts';
export { ErrorCodeSchema, ErrorEnvelopeSchema, HTTP_STATUS_BY_CODE } from './errors.ts';
export { EXEC_LIMITS, ExecCommandSchema, ExecEnvSchema, SandboxPathSchema, utf8Length } from './exec-limits.ts';
export type { ExecErrorFrame, ExecExitFrame, ExecOutputFrame, ExecStreamFrame } from './exec-stream.ts';
export {
  EXEC_STREAM_CONTENT_TYPE,
  ExecErrorFrameSchema,
  ExecExitFrameSchema,
  ExecStderrFrameSchema,
  ExecStdoutFrameSchema,
  ExecStreamFrameSchema,
  ExecTotalBytesSchema,
  ExecTruncatedSchema,
} from './exec-stream.ts';
export type {
  CreateFleetSandboxBody,
  FleetOverviewRow,
  FleetSandboxBody,
  ManageFleetSandboxBody,
} from './fleet.ts';
export {
  CreateFleetSandboxBodySchema,
  FleetOverviewQuerySchema,
  FleetOverviewSchema,
  FleetSandboxListSchema,
  FleetSandboxSchema,
  ManageFleetSandboxBodySchema,
} from './fleet.ts';
export { formatBytes } from './format.ts';
export type { HealthResponse } from './health.ts';
export { HealthResponseSchema } from './health.ts';
export type { ApiKey, CreateApiKeyBody, UpdateApiKeyBody } from './keys.ts';
export { ApiKeyListSchema, ApiKeySchema, CreateApiKeyBodySchema, CreatedApiKeySchema, UpdateApiKeyBodySchema } from './keys.ts';
export type { ApiOperation } from './operations.ts';
export { API_OPERATIONS } from './operations.ts';
export { API_PATHS, fillPath } from './paths.ts';
export type { OpenPort, OpenPortBody, PortOwnerKind, PortUrl, PortVisibility, SandboxPort, SetupSessionPort } from './ports.ts';
export {
  OpenPortBodySchema,
  PORT_OWNERS,
  PORT_TOKEN_PARAM,
  PORT_VISIBILITIES,
  PortNumberSchema,
  PortParamSchema,
  PortUrlSchema,
  SandboxPortListSchema,
  SandboxPortSchema,
  SetupSessionPortListSchema,
  SetupSessionPortSchema,
} from './ports.ts';
export type { SandboxSpecInput } from './sandbox-spec.ts';
export { DEFAULT_SANDBOX_SPEC, SandboxSpecInputSchema, SandboxSpecSchema } from './sandbox-spec.ts';
export type { CreateSandboxBody, ForkAnswer, ForkSandboxBody, SandboxBody, WarmPoolState } from './sandboxes.ts';
export {
  CreateSandboxBodySchema,
  FORK_COUNT_MAX,
  ForkAnswerSchema,
  ForkSandboxBodySchema,
  SANDBOX_SOURCE_LABELS,
  SandboxListSchema,
  SandboxSchema,
  WarmPoolStateSchema,
} from './sandboxes.ts';
export type { SessionToolInput, SessionToolList, SessionToolName } from './session-tools.ts';
export {
  MCP_SESSION_HEADER,
  SESSION_TOOL_NAMES,
  SESSION_TOOLS,
  SessionToolAnswerSchema,
  SessionToolListSchema,
  toolInputJsonSchema,
  toolRefusalText,
} from './session-tools.ts';
export type {
  SandboxAction,
  SessionBody,
  SessionExecAnswer,
  SessionFileBody,
  SessionSandboxBody,
  StartSessionBody,
  WriteSessionFileBody,
} from './sessions.ts';
export {
  InlineSandboxSpecSchema,
  SANDBOX_ACTIONS,
  SessionExecAnswerSchema,
  SessionFileQuerySchema,
  SessionFileSchema,
  SessionListSchema,
  SessionSandboxSchema,
  SessionSchema,
  StartSessionBodySchema,
  WriteSessionFileAnswerSchema,
  WriteSessionFileBodySchema,
} from './sessions.ts';
export type { InstanceSettingsBody, InstanceSettingsPatchBody } from './settings.ts';
export { InstanceSettingsPatchSchema, InstanceSettingsSchema } from './settings.ts';
export type { SandboxTarget } from './targets.ts';
export { SandboxTargetListSchema, SandboxTargetSchema } from './targets.ts';
export type {
  TerminalClientFrame,
  TerminalCloseReason,
  TerminalServerFrame,
  TerminalSessionTokenAnswer,
  TerminalSocketQuery,
} from './terminal.ts';
export {
  TERMINAL_AUTH_TIMEOUT_MS,
  TERMINAL_CLOSE_CODES,
  TERMINAL_CLOSE_REASONS,
  TERMINAL_CONNECTION_TYPES,
  TERMINAL_MAX_FRAME_BYTES,
  TERMINAL_REPLAY_BYTES,
  TERMINAL_TOKEN_TTL_MS,
  TerminalClientFrameSchema,
  TerminalServerFrameSchema,
  TerminalSessionTokenAnswerSchema,
  TerminalSocketQuerySchema,
} from './terminal.ts';
