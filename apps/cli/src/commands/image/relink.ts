import { SandcastApiError } from '@sandcast/client';
import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';

export function registerImageRelink(image: Command): void {
  image
    .command('relink <env>')
    .description('attach the active image to the current configuration again after an environment edit detached it')
    .option('--confirm-boot-source-drift', 'relink even though the boot source (provider, base image, …) changed since the capture', false)
    .action(async (idOrName: string, options: { confirmBootSourceDrift: boolean }, command: Command) => {
      const ctx = contextFrom(command);
      const environment = await ctx.client.environments.resolve(idOrName);
      const answer = await ctx.client.customImages
        .relink(environment.id, { confirmBootSourceDrift: options.confirmBootSourceDrift })
        .catch((error: unknown) => {
          // The server speaks in API fields; say which flag that is here.
          if (
            error instanceof SandcastApiError &&
            error.code === 'unprocessable' &&
            error.details?.classification === 'boot_source_drift'
          ) {
            throw new SandcastApiError({
              status: error.status,
              code: error.code,
              message: `${error.message} From the command line: sandcast image relink ${environment.name} --confirm-boot-source-drift`,
              details: error.details,
            });
          }
          throw error;
        });
      ctx.print(answer, () => {
        switch (answer.classification) {
          case 'in_sync':
            return `Image ${answer.template.id} already matches the configuration of ${environment.name}; nothing changed.`;
          case 'runtime_only':
            return `Relinked image ${answer.template.id} to the current revision (only runtime settings differed).\nFuture runs will use it again.`;
          case 'boot_source_drift':
            return `Relinked image ${answer.template.id} despite the boot-source change, as confirmed.\nFuture runs will use it again.`;
        }
      });
    });
}
