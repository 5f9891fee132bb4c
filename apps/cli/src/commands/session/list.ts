import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderSessionList } from './render.ts';

export function registerSessionList(session: Command): void {
  session
    .command('list')
    .description('list sessions')
    .action(async (_options, command: Command) => {
      const ctx = contextFrom(command);
      const sessions = await ctx.client.sessions.list();
      const agents = ctx.json ? [] : await ctx.client.agents.list({ includeArchived: true }).catch(() => []);
      ctx.print(sessions, () => renderSessionList(sessions, new Map(agents.map((a) => [a.id, a.name]))));
    });
}
