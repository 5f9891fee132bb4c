import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderSandbox } from '../sandbox/render.ts';

/**
 * `session stop` and `session resume`: stop the session's sandbox and start it again; the server
 * converges before it answers. (`session start` starts a session, so starting its sandbox again
 * is `resume`.)
 */
export function registerSessionStopResume(session: Command): void {
  session
    .command('stop <id>')
    .description('stop the session’s sandbox, keeping its files; the session stays active and `session resume` starts it again')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const sandbox = await ctx.client.sessions.stopSandbox(id);
      ctx.print(sandbox, () => `stopped the sandbox of session ${id} (${sandbox.status})\n${renderSandbox(sandbox)}`);
    });
  session
    .command('resume <id>')
    .description('start the session’s stopped sandbox again: the same sandbox, its files and pinned spec')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const sandbox = await ctx.client.sessions.startSandbox(id);
      ctx.print(sandbox, () => `started the sandbox of session ${id} (${sandbox.status})\n${renderSandbox(sandbox)}`);
    });
}
