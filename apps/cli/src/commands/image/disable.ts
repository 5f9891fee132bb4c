import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';

export function registerImageDisable(image: Command): void {
  image
    .command('disable <env>')
    .description('revoke the active image; runs go back to the base provider configuration')
    .option('--delete-provider-template', 'also delete the image at the provider (without it, the provider keeps its copy)')
    .action(async (idOrName: string, options: { deleteProviderTemplate?: boolean }, command: Command) => {
      const ctx = contextFrom(command);
      const environment = await ctx.client.environments.resolve(idOrName);
      const answer = await ctx.client.customImages.disable(environment.id, {
        deleteProviderTemplate: options.deleteProviderTemplate === true,
      });
      ctx.print(answer, () => {
        const lines = [`Disabled image ${answer.template.id} of ${environment.name} (now ${answer.template.status}).`];
        if (answer.providerTemplateDeleted) lines.push('The provider’s copy was deleted.');
        else if (options.deleteProviderTemplate)
          lines.push(`The provider’s copy was kept${answer.providerTemplateNote ? `: ${answer.providerTemplateNote}` : '.'}`);
        lines.push('Future runs will use the base provider configuration.');
        return lines.join('\n');
      });
    });
}
