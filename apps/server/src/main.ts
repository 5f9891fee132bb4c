import { loadConfig } from './config.ts';
import { startServer } from './server.ts';
import { formatStartupSummary, gatherStartupSummary } from './startup-summary.ts';

// The composition root: configuration from the environment, then run until a signal.
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  console.error(`sandcast: ${(error as Error).message}`);
  process.exit(2);
}

const server = await startServer(config).catch((error: Error) => {
  console.error(`sandcast: could not start: ${error.message}`);
  process.exit(1);
});

// One human summary on stderr (stdout carries the JSON log lines): where everything is.
process.stderr.write(formatStartupSummary(await gatherStartupSummary(server, config)));

let stopping = false;
const stop = (signal: string) => {
  if (stopping) {
    server.app.log.warn('second signal: exiting without waiting');
    process.exit(1);
  }
  stopping = true;
  server.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
  server.close().then(
    () => process.exit(0),
    (error: Error) => {
      server.app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
