import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SandcastClient } from '@sandcast/client';
import type { DeploymentMode } from '@sandcast/core';
import { createDb, createStore } from '@sandcast/db';
import { loadConfig, type RunningServer, startServer } from '@sandcast/server';
import { ensureWebBuild } from './web-build.ts';

export interface E2eServer {
  server: RunningServer;
  url: string;
  dataDir: string;
  client: SandcastClient;
  close(): Promise<void>;
}

/**
 * A real Sandcast server in this process: the built UI, embedded PGlite, the fake provider (fast)
 * next to the real ones, on a free loopback port.
 */
export async function startE2eServer(options: { mode?: DeploymentMode; env?: Record<string, string> } = {}): Promise<E2eServer> {
  const webDist = ensureWebBuild();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-e2e-'));
  const config = loadConfig({
    SANDCAST_HOST: '127.0.0.1',
    SANDCAST_PORT: '0',
    SANDCAST_DATA_DIR: dataDir,
    SANDCAST_LOG_LEVEL: 'warn',
    SANDCAST_ENABLE_FAKE_PROVIDER: '1',
    SANDCAST_DEPLOYMENT_MODE: options.mode ?? 'local_trusted',
    SANDCAST_WEB_DIST: webDist,
    // The browser terminal is what the suite drives; the SSH gateway has its own tests.
    SANDCAST_SSH_PORT: 'off',
    ...options.env,
  });
  const server = await startServer(config, { store: createStore(await createDb({ pglite: 'memory://' })) });
  return {
    server,
    url: server.url,
    dataDir,
    client: new SandcastClient({ baseUrl: server.url }),
    close: async () => {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
