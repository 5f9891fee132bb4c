import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderEnvironment } from './render.ts';

export function registerEnvShow(env: Command): void {
  env
    .command('show <env>')
    .description('show one environment (by name or id)')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const found = await ctx.client.environments.resolve(idOrName);
      ctx.print(found, () => renderEnvironment(found));
    });
}
