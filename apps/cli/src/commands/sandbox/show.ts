import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderSandbox } from './render.ts';

export function registerSandboxShow(sandbox: Command): void {
  sandbox
    .command('show <id>')
    .description('show one sandbox')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const found = await ctx.client.sandboxes.get(id);
      ctx.print(found, () => renderSandbox(found));
    });
}
