import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { resolveSessionTarget } from './session-target.ts';

export function registerImageCancel(image: Command): void {
  image
    .command('cancel <target>')
    .summary('stop a setup session without capturing')
    .description('stop a setup session without capturing; the active image stays as it is. <target> is an environment or a session id')
    .option('--reason <text>', 'recorded with the session and in the activity log')
    .action(async (target: string, options: { reason?: string }, command: Command) => {
      const ctx = contextFrom(command);
      const { session } = await resolveSessionTarget(ctx.client, target);
      const answer = await ctx.client.customImages.cancel(session.id, options.reason === undefined ? {} : { reason: options.reason });
      ctx.print(answer, () => `Setup cancelled: session ${answer.session.id} is closed and the active image is unchanged.`);
    });
}
