export type { Database, DatabaseKind, DatabaseOptions, Db } from './connect.ts';
export { createDb } from './connect.ts';
export { isUniqueViolation } from './errors.ts';
export { newId } from './ids.ts';
export type { Migration, MigrationTarget } from './migrate.ts';
export { loadMigrations, migrate } from './migrate.ts';
export type { ActivityRecord, NewActivity } from './repos/activity.repo.ts';
export type { AgentChange, NewAgent } from './repos/agents.repo.ts';
export type { ApiKeyRecord } from './repos/api-keys.repo.ts';
export type { BridgeUpstreamRow, BridgeUpstreamWrite } from './repos/bridge-upstreams.repo.ts';
export type { NewCheckpoint, RecordOutcome } from './repos/checkpoints.repo.ts';
export type { ConnectionChange, NewConnection } from './repos/connections.repo.ts';
export type { EnvironmentChange, NewEnvironment } from './repos/environments.repo.ts';

export type { PortRecord } from './repos/ports.repo.ts';
export type { NewSandbox, SandboxGuard, SandboxPatch } from './repos/sandboxes.repo.ts';
export type { NewSession } from './repos/sessions.repo.ts';

export type { NewSetupSession, SetupSessionPatch } from './repos/setup-sessions.repo.ts';
export type { NewTemplate } from './repos/templates.repo.ts';
export type { TerminalSessionRecord } from './repos/terminal-sessions.repo.ts';
export type { PoolClaim, WarmPoolRecord } from './repos/warm-pools.repo.ts';
export type { Repositories, Store } from './store.ts';
export { createRepositories, createStore, type StoreOptions } from './store.ts';
