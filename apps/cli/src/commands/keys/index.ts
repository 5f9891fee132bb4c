import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { table } from '../../format.ts';

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('manage API keys (authenticated mode)');

  keys
    .command('create <name>')
    .description('create an API key; it is printed once and never again')
    .option('--role <role>', 'admin or agent', 'agent')
    .action(async (name: string, options: { role: string }, command: Command) => {
      const ctx = contextFrom(command);
      const created = await ctx.client.keys.create({ name, role: options.role as 'admin' | 'agent' });
      ctx.print(
        created,
        () =>
          `created ${created.key.role} key ${created.key.id} (${name})\n\n  ${created.secret}\n\nStore it now: it cannot be shown again.`,
      );
    });

  keys
    .command('list')
    .description('list API keys (never the keys themselves)')
    .action(async (_options, command: Command) => {
      const ctx = contextFrom(command);
      const list = await ctx.client.keys.list();
      ctx.print(list, () =>
        table(
          ['ID', 'NAME', 'ROLE', 'PREFIX', 'LAST USED', 'REVOKED'],
          list.map((k) => [k.id, k.name, k.role, `${k.prefix}…`, k.lastUsedAt ?? '-', k.revokedAt ?? '-']),
        ),
      );
    });

  keys
    .command('revoke <id>')
    .description('revoke an API key; requests with it are refused from now on')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const key = await ctx.client.keys.revoke(id);
      ctx.print(key, () => `revoked ${key.id} (${key.name})`);
    });
}
