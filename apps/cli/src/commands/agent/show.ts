import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderAgent } from './render.ts';
import { revisionIndex } from './revision-index.ts';

export function registerAgentShow(agent: Command): void {
  agent
    .command('show <agent>')
    .description('show an agent (by name or id): its policy, the revisions it binds and its versions')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const found = await ctx.client.agents.resolve(idOrName);
      const versions = await ctx.client.agents.versions(found.id);
      if (ctx.json) return ctx.print({ ...found, versions }, () => '');
      const index = await revisionIndex(
        ctx.client,
        versions.flatMap((v) => Object.values(v.sandboxPolicy.bindings).map((b) => b.environmentRevisionId)),
      );
      ctx.print(found, () => renderAgent(found, versions, index));
    });
}
