import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderChanges } from './render.ts';
import { resolveSessionTarget } from './session-target.ts';

export function registerImageChanges(image: Command): void {
  image
    .command('changes <target>')
    .summary('what the setup changed so far, and likely secrets')
    .description(
      'what the setup changed so far (files added, modified, deleted) and likely secrets; <target> is an environment (its running session) or a session id',
    )
    .action(async (target: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const { session } = await resolveSessionTarget(ctx.client, target);
      const changes = await ctx.client.customImages.changes(session.id);
      ctx.print(changes, () => renderChanges(changes));
    });
}
