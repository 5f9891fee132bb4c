export type { ApiKeyRole, DeploymentMode, Principal, RouteAccess } from './access.ts';
export { API_KEY_ROLES, allows, DEPLOYMENT_MODES, ROUTE_ACCESS } from './access.ts';
export type { Environment, EnvironmentRevision, EnvironmentRevisionRef } from './environment.ts';
export { ENVIRONMENT_NAME_PATTERN } from './environment.ts';
export type { ErrorCode, ErrorDetails } from './errors.ts';
export { ERROR_CODES, isSandcastError, SandcastError } from './errors.ts';
export { REDACTED, redact } from './redact.ts';
export type { InstanceSettings, InstanceSettingsPatch } from './settings.ts';
export { DEFAULT_INSTANCE_SETTINGS, mergeSettings } from './settings.ts';
