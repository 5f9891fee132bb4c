export type { ActivityEntry } from './activity.ts';
export { ActivityEntrySchema, ActivityListSchema, ActivityQuerySchema } from './activity.ts';
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
  UpdateEnvironmentBodySchema,
} from './environments.ts';
export type { ErrorEnvelope, FieldIssue } from './errors.ts';
export { ErrorEnvelopeSchema, HTTP_STATUS_BY_CODE } from './errors.ts';
export type { HealthResponse } from './health.ts';
export { HealthResponseSchema } from './health.ts';
export type { ApiKey, CreateApiKeyBody } from './keys.ts';
export { ApiKeyListSchema, ApiKeySchema, CreateApiKeyBodySchema, CreatedApiKeySchema } from './keys.ts';
export { API_PATHS, fillPath } from './paths.ts';
export type { InstanceSettingsBody, InstanceSettingsPatchBody } from './settings.ts';
export { InstanceSettingsPatchSchema, InstanceSettingsSchema } from './settings.ts';
export type { SandboxTarget } from './targets.ts';
export { SandboxTargetListSchema, SandboxTargetSchema } from './targets.ts';
