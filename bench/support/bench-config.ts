import { loadConfig } from '@sandcast/server';

/**
 * A benchmark server's config: a free loopback port, its own data dir, warnings only. `rawRounds`:
 * the benchmark also creates instances through the raw provider, which no record owns, so the
 * reconciler's sweep is kept out of the run (it would collect them mid-loop).
 */
export function benchServerConfig(dataDir: string, options: { rawRounds?: boolean } = {}) {
  return loadConfig({
    SANDCAST_PORT: '0',
    SANDCAST_SSH_PORT: '0',
    SANDCAST_DATA_DIR: dataDir,
    SANDCAST_LOG_LEVEL: 'warn',
    ...(options.rawRounds ? { SANDCAST_RECONCILE_INTERVAL_SECONDS: '3600' } : {}),
  });
}
