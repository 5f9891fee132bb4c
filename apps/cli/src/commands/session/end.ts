import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';

export function registerSessionEnd(session: Command): void {
  session
    .command('end <id>')
    .description('end a session: its sandbox is torn down; the session and its records stay')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const ended = await ctx.client.sessions.end(id);
      ctx.print(
        ended,
        () => `ended session ${ended.id}${ended.primarySandboxId ? ` (sandbox ${ended.primarySandboxId} is torn down)` : ''}`,
      );
    });
}
