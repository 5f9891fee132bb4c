import { SandcastApiError } from '@sandcast/client';
import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { CommandFailed, formatTime } from '../../format.ts';
import { describeTemplate } from './render.ts';

export function registerImageRollback(image: Command): void {
  image
    .command('rollback <env>')
    .description('make the previous image active again (it swaps places with the one that replaced it)')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const environment = await ctx.client.environments.resolve(idOrName);
      const answer = await ctx.client.customImages.rollback(environment.id).catch(async (error: unknown) => {
        if (!(error instanceof SandcastApiError) || error.code !== 'not_found') throw error;
        throw (await afterDisable(ctx.client, environment)) ?? error;
      });
      ctx.print(answer, () =>
        [
          `Rolled back ${environment.name}: ${describeTemplate(answer.activeTemplate)} is active again;`,
          `${answer.supersededTemplate.id} is now ${answer.supersededTemplate.status}.`,
          'Future runs will use the previous template.',
        ].join('\n'),
      );
    });
}

/**
 * Rollback swaps the active image with the one it replaced, so with no active image (after
 * Disable) there is nothing to swap: say so, and what does bring an image back — a new capture.
 * A disabled image is revoked for good, and a superseded one returns only through a Rollback.
 */
async function afterDisable(
  client: ReturnType<typeof contextFrom>['client'],
  environment: { id: string; name: string },
): Promise<CommandFailed | null> {
  const history = await client.customImages.history(environment.id);
  if (history.some((t) => t.status === 'active')) return null;
  const revoked = history.find((t) => t.status === 'revoked');
  const superseded = history.filter((t) => t.status === 'superseded').map((t) => t.id);
  if (!revoked && superseded.length === 0) return null;
  const lines = [
    revoked
      ? `${environment.name} has no active custom image: ${revoked.id} was disabled ${formatTime(revoked.updatedAt)}, and runs use the base configuration.`
      : `${environment.name} has no active custom image; runs use the base configuration.`,
    'Rollback swaps the active image with the one it replaced, so it needs an active image. A disabled image cannot be made active again.',
  ];
  if (superseded.length > 0)
    lines.push(
      `Earlier images (${superseded.join(', ')}) stay in \`sandcast image history ${environment.name}\` but come back only through a rollback from an active image.`,
    );
  lines.push(`To boot from a custom image again, capture one: sandcast image setup ${environment.name}`);
  return new CommandFailed(lines.join('\n'));
}
