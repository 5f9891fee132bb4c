import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { withProgress } from '../../progress.ts';
import { confirmCaptureReview } from './capture-review.ts';
import { describeTemplate } from './render.ts';
import { resolveSessionTarget } from './session-target.ts';

export function registerImageFinish(image: Command): void {
  image
    .command('finish <target>')
    .summary('capture the setup sandbox as the new active image')
    .description(
      'capture the setup sandbox as the new active image; <target> is an environment (its running session) or a session id. ' +
        'Likely secrets in the capture review are printed first; at a terminal it asks before capturing them, ' +
        'otherwise it refuses unless --yes is given.',
    )
    .option('-y, --yes', 'capture even when the review finds likely secrets, without asking', false)
    .action(async (target: string, options: { yes: boolean }, command: Command) => {
      const ctx = contextFrom(command);
      const { session } = await resolveSessionTarget(ctx.client, target);
      await confirmCaptureReview(ctx, session.id, target, { yes: options.yes });
      const answer = await withProgress('Capturing template', ctx.client.customImages.finish(session.id), { quiet: ctx.json });
      ctx.print(answer, () => `Template captured: ${describeTemplate(answer.template)}\nFuture runs will boot from it.`);
    });
}
