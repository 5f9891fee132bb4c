import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderSessionSandbox } from './render.ts';

/**
 * `session stop` and `session resume`: stop the session's sandbox and start it again. (`session
 * start` starts a session, so starting its sandbox again is `resume`.)
 */
export function registerSessionStopResume(session: Command): void {
  session
    .command('stop <id>')
    .description('stop the session’s sandbox; the session stays active and `session resume` starts it again')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const view = await ctx.client.sessions.stopSandbox(id);
      ctx.print(view, () => `stopping the sandbox of session ${id}\n${renderSessionSandbox(view)}`);
    });
  session
    .command('resume <id>')
    .description('start the session’s stopped sandbox again: same sandbox id and pinned spec')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const view = await ctx.client.sessions.startSandbox(id);
      ctx.print(view, () => `starting the sandbox of session ${id}\n${renderSessionSandbox(view)}`);
    });
}
