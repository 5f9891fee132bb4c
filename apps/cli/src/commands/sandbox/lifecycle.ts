import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';

/** `sandbox stop` / `sandbox start`: the server converges before it answers. */
export function registerSandboxLifecycle(sandbox: Command): void {
  sandbox
    .command('stop <id>')
    .description('stop a sandbox, keeping its files (`sandbox start` brings it back)')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const stopped = await ctx.client.sandboxes.stop(id);
      ctx.print(stopped, () => `stopped sandbox ${stopped.id} (${stopped.status})`);
    });
  sandbox
    .command('start <id>')
    .description('start a stopped sandbox again, with the files it had')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const started = await ctx.client.sandboxes.start(id);
      ctx.print(started, () => `started sandbox ${started.id} (${started.status})`);
    });
}
