import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';

export function registerAgentArchive(agent: Command): void {
  agent
    .command('archive <agent>')
    .description('archive an agent: it starts no new sessions; its versions and sessions stay readable')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const found = await ctx.client.agents.resolve(idOrName);
      const archived = await ctx.client.agents.archive(found.id);
      ctx.print(archived, () => `archived agent ${archived.name} (${archived.id}); \`sandcast agent list --all\` still lists it`);
    });
}
