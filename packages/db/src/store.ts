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
import { createRunningSandboxes, inTransaction, NO_RUNNING_SANDBOXES, type RunningSandboxes } from './running-sandboxes.ts';
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

/** `running`: the store's cache of just-touched running sandboxes (ADR 0033); none by default. */
export function createRepositories(db: Db, running: RunningSandboxes = NO_RUNNING_SANDBOXES): Repositories {
  return {
    settings: createSettingsRepo(db),
    environments: createEnvironmentsRepo(db),
    apiKeys: createApiKeysRepo(db),
    activity: createActivityRepo(db),
    setupSessions: createSetupSessionsRepo(db),
    templates: createTemplatesRepo(db),
    sandboxes: createSandboxesRepo(db, running),
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
    checkpoints: createCheckpointsRepo(db, running),
    warmPools: createWarmPoolsRepo(db, running),
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

export interface StoreOptions {
  /**
   * How long a running sandbox's read-and-touch answers repeated operations from memory (ADR
   * 0033); 0 turns it off. Default 1000 ms.
   */
  runningCacheMs?: number;
}

export function createStore(database: Database, options: StoreOptions = {}): Store {
  const running = createRunningSandboxes({ ttlMs: options.runningCacheMs ?? 1000 });
  return {
    kind: database.kind,
    repos: createRepositories(database.db, running),
    transaction: async (fn) => {
      const tx = inTransaction(running);
      const out = await database.db.transaction((handle) => fn(createRepositories(handle as unknown as Db, tx.view)));
      tx.committed();
      return out;
    },
    close: () => database.close(),
  };
}
