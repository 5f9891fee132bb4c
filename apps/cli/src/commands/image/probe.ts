import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { CommandFailed } from '../../format.ts';
import { withProgress } from '../../progress.ts';

export function registerImageProbe(image: Command): void {
  image
    .command('probe <env>')
    .summary('boot a sandbox the way a run would and run a short check')
    .description(
      'boot a throwaway sandbox the way a run would (active image applied), run a short check, tear it down; exits 1 when the check fails',
    )
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const environment = await ctx.client.environments.resolve(idOrName);
      const answer = await withProgress('Probing', ctx.client.customImages.probe(environment.id), { quiet: ctx.json });
      const d = answer.diagnostics;
      ctx.print(answer, () =>
        [
          `${answer.ok ? 'OK' : 'FAILED'}: ${environment.name} booted from ${d.bootedFrom === 'custom_image' ? `image ${answer.imageId}` : 'the base provider configuration'} in ${answer.durationMs} ms`,
          `provider:  ${d.provider}, revision ${d.environmentRevisionId}`,
          `exit code: ${d.exitCode ?? '-'}`,
          ...(d.error ? [`error:     ${d.error}`] : []),
          ...(d.output ? ['output:', d.output.trimEnd().replace(/^/gm, '  ')] : []),
        ].join('\n'),
      );
      if (!answer.ok && !ctx.json) throw new CommandFailed(`the probe of ${environment.name} failed`);
      if (!answer.ok) process.exitCode = 1;
    });
}
