import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';

/**
 * `sandcast start`: runs the server in the foreground. The server is its own program
 * (@sandcast/server's bin); the CLI launches it with the same environment and forwards signals.
 */
export function registerStart(program: Command): void {
  program
    .command('start')
    .description('run the Sandcast server in the foreground (configured by SANDCAST_* environment variables)')
    .action(() => {
      const serverPackage = fileURLToPath(import.meta.resolve('@sandcast/server/package.json'));
      const bin = path.join(path.dirname(serverPackage), 'bin', 'sandcast-server.mjs');
      const child = spawn(process.execPath, [bin], { stdio: 'inherit', env: process.env });
      const forward = (signal: NodeJS.Signals) => child.kill(signal);
      process.on('SIGINT', forward);
      process.on('SIGTERM', forward);
      child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
    });
}
