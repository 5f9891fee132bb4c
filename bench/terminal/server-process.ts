/**
 * Runs one Sandcast server in a process of its own, so its memory can be measured without the
 * measuring client in the same heap. Used by bench/terminal/run.ts and the terminal flood test.
 * Prints one JSON line `{url, pid, setupSessionId, sshPort}` once a setup session on the fake
 * provider is running, then serves until SIGTERM (it removes its data dir on the way out). Loopback
 * only. `SANDCAST_SSH_PORT` (default `off`) and `SANDCAST_LOG_LEVEL` (default `warn`) pass through.
 *
 *   node --import tsx bench/terminal/server-process.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SandcastClient } from '@sandcast/client';
import { loadConfig, startServer } from '@sandcast/server';

const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-terminal-bench-'));
const server = await startServer(
  loadConfig({
    SANDCAST_HOST: '127.0.0.1',
    SANDCAST_PORT: '0',
    SANDCAST_DATA_DIR: dataDir,
    SANDCAST_LOG_LEVEL: process.env.SANDCAST_LOG_LEVEL ?? 'warn',
    SANDCAST_ENABLE_FAKE_PROVIDER: '1',
    SANDCAST_SSH_PORT: process.env.SANDCAST_SSH_PORT ?? 'off',
  }),
);
const client = new SandcastClient({ baseUrl: server.url });
await client.settings.update({ experimental: { enableEnvironments: true } });
const environment = await client.environments.create({ name: 'terminal-bench', provider: 'fake', config: {} });
const { session } = await client.customImages.startSetup(environment.id);
process.stdout.write(
  `${JSON.stringify({ url: server.url, pid: process.pid, setupSessionId: session.id, sshPort: server.sshGateway?.port ?? null })}\n`,
);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await client.customImages.cancel(session.id).catch(() => undefined);
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
// The parent going away ends this process too.
process.stdin.on('end', () => void stop());
process.stdin.resume();
