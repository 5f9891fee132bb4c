import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderOverview } from './render.ts';

export function registerImageStatus(image: Command): void {
  image
    .command('status <env>')
    .summary('the active image, whether it matches the config, setup sessions')
    .description('show the custom image of an environment: capability, active image, whether it still matches the config, setup sessions')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const environment = await ctx.client.environments.resolve(idOrName);
      const overview = await ctx.client.customImages.overview(environment.id);
      ctx.print(overview, () => renderOverview(environment, overview));
    });
}
