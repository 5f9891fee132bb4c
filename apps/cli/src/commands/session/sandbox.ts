import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderSessionSandbox } from './render.ts';

export function registerSessionSandbox(session: Command): void {
  session
    .command('sandbox <id>')
    .description('show the session’s sandbox: pinned revision, image, target, containment, capabilities, recovery, generation, state')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const view = await ctx.client.sessions.sandbox(id);
      const environments = ctx.json || !view.environmentId ? [] : await ctx.client.environments.list().catch(() => []);
      ctx.print(view, () => renderSessionSandbox(view, environments.find((e) => e.id === view.environmentId)?.name));
    });
}
