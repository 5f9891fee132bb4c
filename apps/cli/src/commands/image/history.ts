import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderHistory } from './render.ts';

export function registerImageHistory(image: Command): void {
  image
    .command('history <env>')
    .description('list every image captured for an environment, newest first')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const environment = await ctx.client.environments.resolve(idOrName);
      const templates = await ctx.client.customImages.history(environment.id);
      ctx.print(templates, () => renderHistory(templates));
    });
}
