export type { ApiKeyRole, DeploymentMode, Principal, RouteAccess } from './access.ts';
export { API_KEY_ROLES, allows, DEPLOYMENT_MODES, ROUTE_ACCESS } from './access.ts';
export type { Agent, AgentCapability, AgentVersion, AgentVersionRef, Session, SessionStatus } from './agent.ts';
export { AGENT_CAPABILITIES, AGENT_NAME_PATTERN, SESSION_STATUSES } from './agent.ts';
export type { Checkpoint, CheckpointTrigger } from './checkpoint.ts';
export { CHECKPOINT_TRIGGERS } from './checkpoint.ts';
export type { Connection } from './connection.ts';
export { CONNECTION_NAME_PATTERN } from './connection.ts';
export type { CustomImageKind, CustomImageStatus } from './custom-image.machine.ts';
export { CUSTOM_IMAGE_KINDS, CUSTOM_IMAGE_STATUSES, customImageMachine } from './custom-image.machine.ts';
export type { CustomImageTemplate, FleetReservation, RunningSetupSession, Sandbox, SandboxSource, SetupSession } from './custom-image.ts';
export { isRunningSetup, SANDBOX_SOURCES } from './custom-image.ts';
export type { Environment, EnvironmentRevision, EnvironmentRevisionRef } from './environment.ts';
export { ENVIRONMENT_NAME_PATTERN } from './environment.ts';
export type { EnvironmentPolicy } from './environment-policy.ts';
export { environmentConfigIssues } from './environment-policy.ts';
export type { ErrorCode, ErrorDetails } from './errors.ts';
export { ERROR_CODES, isSandcastError, SandcastError } from './errors.ts';
export type { BootSource } from './fingerprint.ts';
export { bootSourceDrift, bootSourceOf, canonicalJson } from './fingerprint.ts';
export type { FleetManageAction, SandboxAttentionFlag } from './fleet.ts';
export {
  FLEET_DEFAULT_RESERVATION,
  FLEET_ID_PREFIX,
  FLEET_MANAGE_ACTIONS,
  FLEET_NOT_OURS_MESSAGE,
  fleetReservationOf,
  SANDBOX_ATTENTION_FLAGS,
  sandboxAttention,
} from './fleet.ts';
export type { Machine } from './machine.ts';
export { InvalidTransition } from './machine.ts';
export { REDACTED, redact } from './redact.ts';
export type { SandboxDesiredStatus, SandboxStatus } from './sandbox.machine.ts';
export { SANDBOX_DESIRED_STATUSES, SANDBOX_STATUSES, sandboxMachine } from './sandbox.machine.ts';
export { normaliseSandboxPath, sandboxPathProblem } from './sandbox-path.ts';
export type {
  InlineAllowance,
  InlineSandboxSpec,
  PolicyIssue,
  PolicyResolution,
  SandboxBinding,
  SandboxPolicy,
  SandboxPolicyMode,
  SessionSandboxRequest,
} from './sandbox-policy.ts';
export {
  BINDING_NAME_PATTERN,
  inlineSpecIssues,
  MAX_BINDINGS,
  resolveSandboxPolicy,
  SANDBOX_POLICY_MODES,
  sandboxPolicyIssues,
} from './sandbox-policy.ts';
export type {
  Durability,
  IdleAction,
  NetworkContainment,
  SandboxContainment,
  SandboxLifecycle,
  SandboxSpec,
  SpecIssue,
  WarmPool,
} from './sandbox-spec.ts';
export {
  bootstrapSecretIssues,
  containmentIssues,
  DEFAULT_SANDBOX_SPEC,
  DURABILITIES,
  IDLE_ACTIONS,
  NETWORK_CONTAINMENTS,
  SANDBOX_SPEC_LIMITS,
  withSpecDefaults,
} from './sandbox-spec.ts';
export { CONTENT_SCAN_LIMITS, contentScanCandidates, looksBinary, scanTextForSecrets } from './secret-content-scan.ts';
export type { SecretWarning } from './secret-scan.ts';
export { likelySecrets } from './secret-scan.ts';
export type { InstanceSettings, InstanceSettingsPatch } from './settings.ts';
export { DEFAULT_INSTANCE_SETTINGS, mergeSettings } from './settings.ts';
export type { SetupSessionStatus } from './setup-session.machine.ts';
export {
  ACTIVE_SETUP_SESSION_STATUSES,
  isActiveSetupSession,
  SETUP_SESSION_LABELS,
  SETUP_SESSION_STATUSES,
  setupSessionMachine,
} from './setup-session.machine.ts';
