import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';

export function registerEnvDelete(env: Command): void {
  env
    .command('delete <env>')
    .description('delete an environment and its revisions')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const found = await ctx.client.environments.resolve(idOrName);
      const deleted = await ctx.client.environments.delete(found.id);
      ctx.print(deleted, () => `deleted environment ${deleted.name}`);
    });
}
