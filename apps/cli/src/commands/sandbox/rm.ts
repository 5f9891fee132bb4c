import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';

export function registerSandboxRm(sandbox: Command): void {
  sandbox
    .command('rm <id>')
    .alias('delete')
    .description('delete a sandbox (the provider tears it down)')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const deleted = await ctx.client.sandboxes.delete(id);
      ctx.print(deleted, () => `deleted sandbox ${deleted.id} (${deleted.status})`);
    });
}
