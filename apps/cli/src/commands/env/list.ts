import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderEnvironmentList } from './render.ts';

export function registerEnvList(env: Command): void {
  env
    .command('list')
    .description('list environments')
    .action(async (_options, command: Command) => {
      const ctx = contextFrom(command);
      const envs = await ctx.client.environments.list();
      ctx.print(envs, () => renderEnvironmentList(envs));
    });
}
