import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderAgentList } from './render.ts';

export function registerAgentList(agent: Command): void {
  agent
    .command('list')
    .description('list agents')
    .option('--all', 'include archived agents')
    .action(async (options: { all?: boolean }, command: Command) => {
      const ctx = contextFrom(command);
      const agents = await ctx.client.agents.list({ includeArchived: options.all === true });
      ctx.print(agents, () => renderAgentList(agents));
    });
}
