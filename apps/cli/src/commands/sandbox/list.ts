import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderSandboxList } from './render.ts';

export function registerSandboxList(sandbox: Command): void {
  sandbox
    .command('list')
    .description('list sandboxes')
    .action(async (_options, command: Command) => {
      const ctx = contextFrom(command);
      const sandboxes = await ctx.client.sandboxes.list();
      // Names make the table readable; without them (environments off, say) the ids will do.
      const environments = ctx.json ? [] : await ctx.client.environments.list().catch(() => []);
      ctx.print(sandboxes, () => renderSandboxList(sandboxes, new Map(environments.map((e) => [e.id, e.name]))));
    });
}
