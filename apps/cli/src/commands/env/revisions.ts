import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { formatTime, table } from '../../format.ts';

export function registerEnvRevisions(env: Command): void {
  env
    .command('revisions <env>')
    .description('list the immutable revisions of an environment, newest first')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const found = await ctx.client.environments.resolve(idOrName);
      const revisions = await ctx.client.environments.revisions(found.id);
      ctx.print(revisions, () =>
        table(
          ['REVISION', 'PROVIDER', 'CREATED', 'DURABILITY', 'CONFIG'],
          revisions.map((r) => [String(r.number), r.provider, formatTime(r.createdAt), r.spec.durability, JSON.stringify(r.config)]),
        ),
      );
    });
}
