import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { describeTemplate } from './render.ts';

export function registerImageRollback(image: Command): void {
  image
    .command('rollback <env>')
    .description('make the previous image active again (it swaps places with the one that replaced it)')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const environment = await ctx.client.environments.resolve(idOrName);
      const answer = await ctx.client.customImages.rollback(environment.id);
      ctx.print(answer, () =>
        [
          `Rolled back ${environment.name}: ${describeTemplate(answer.activeTemplate)} is active again;`,
          `${answer.supersededTemplate.id} is now ${answer.supersededTemplate.status}.`,
          'Future runs will use the previous template.',
        ].join('\n'),
      );
    });
}
