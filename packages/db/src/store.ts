import type { Database, DatabaseKind, Db } from './connect.ts';
import { createActivityRepo } from './repos/activity.repo.ts';
import { createAgentsRepo } from './repos/agents.repo.ts';
import { createApiKeysRepo } from './repos/api-keys.repo.ts';
import { createBridgeUpstreamsRepo } from './repos/bridge-upstreams.repo.ts';
import { createCheckpointsRepo } from './repos/checkpoints.repo.ts';
import { createConnectionsRepo } from './repos/connections.repo.ts';
import { createEnvironmentsRepo } from './repos/environments.repo.ts';
import { createLeaderLeasesRepo } from './repos/leader-leases.repo.ts';
import { createPortsRepo } from './repos/ports.repo.ts';
import { createSandboxesRepo } from './repos/sandboxes.repo.ts';
import { createSessionsRepo } from './repos/sessions.repo.ts';
import { createSettingsRepo } from './repos/settings.repo.ts';
import { createSetupSessionsRepo } from './repos/setup-sessions.repo.ts';
import { createSshCredentialsRepo } from './repos/ssh-credentials.repo.ts';
import { createStatusCountsRepo } from './repos/status-counts.repo.ts';
import { createTemplatesRepo } from './repos/templates.repo.ts';
import { createTerminalSessionsRepo } from './repos/terminal-sessions.repo.ts';
import { createUiSessionsRepo } from './repos/ui-sessions.repo.ts';
import { createWarmPoolsRepo } from './repos/warm-pools.repo.ts';
import { sandboxPorts, setupSessionPorts } from './schema.ts';

export interface Repositories {
  settings: ReturnType<typeof createSettingsRepo>;
  environments: ReturnType<typeof createEnvironmentsRepo>;
  apiKeys: ReturnType<typeof createApiKeysRepo>;
  activity: ReturnType<typeof createActivityRepo>;
  setupSessions: ReturnType<typeof createSetupSessionsRepo>;
  templates: ReturnType<typeof createTemplatesRepo>;
  sandboxes: ReturnType<typeof createSandboxesRepo>;
  sandboxPorts: ReturnType<typeof createPortsRepo>;
  setupSessionPorts: ReturnType<typeof createPortsRepo>;
  terminalSessions: ReturnType<typeof createTerminalSessionsRepo>;
  sshCredentials: ReturnType<typeof createSshCredentialsRepo>;
  uiSessions: ReturnType<typeof createUiSessionsRepo>;
  statusCounts: ReturnType<typeof createStatusCountsRepo>;
  agents: ReturnType<typeof createAgentsRepo>;
  sessions: ReturnType<typeof createSessionsRepo>;
  leaderLeases: ReturnType<typeof createLeaderLeasesRepo>;
  connections: ReturnType<typeof createConnectionsRepo>;
  checkpoints: ReturnType<typeof createCheckpointsRepo>;
  warmPools: ReturnType<typeof createWarmPoolsRepo>;
  bridgeUpstreams: ReturnType<typeof createBridgeUpstreamsRepo>;
}

export function createRepositories(db: Db): Repositories {
  return {
    settings: createSettingsRepo(db),
    environments: createEnvironmentsRepo(db),
    apiKeys: createApiKeysRepo(db),
    activity: createActivityRepo(db),
    setupSessions: createSetupSessionsRepo(db),
    templates: createTemplatesRepo(db),
    sandboxes: createSandboxesRepo(db),
    sandboxPorts: createPortsRepo(db, sandboxPorts),
    setupSessionPorts: createPortsRepo(db, setupSessionPorts),
    terminalSessions: createTerminalSessionsRepo(db),
    sshCredentials: createSshCredentialsRepo(db),
    uiSessions: createUiSessionsRepo(db),
    statusCounts: createStatusCountsRepo(db),
    agents: createAgentsRepo(db),
    sessions: createSessionsRepo(db),
    leaderLeases: createLeaderLeasesRepo(db),
    connections: createConnectionsRepo(db),
    checkpoints: createCheckpointsRepo(db),
    warmPools: createWarmPoolsRepo(db),
    bridgeUpstreams: createBridgeUpstreamsRepo(db),
  };
}

/** The data layer as services see it: repositories, and a transaction that hands out more. */
export interface Store {
  kind: DatabaseKind;
  repos: Repositories;
  /** Runs `fn` in one transaction; a throw rolls everything back. */
  transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function createStore(database: Database): Store {
  return {
    kind: database.kind,
    repos: createRepositories(database.db),
    transaction: (fn) => database.db.transaction((tx) => fn(createRepositories(tx as unknown as Db))),
    close: () => database.close(),
  };
}
