import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { parseValue, setPath, UsageError } from '../../format.ts';

function flatten(value: unknown, prefix = ''): string[] {
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
  return [`${prefix} = ${JSON.stringify(value)}`];
}

export function registerSettings(program: Command): void {
  const settings = program.command('settings').description('read and change instance settings');

  settings
    .command('get')
    .description('show the instance settings')
    .action(async (_options, command: Command) => {
      const ctx = contextFrom(command);
      const value = await ctx.client.settings.get();
      ctx.print(value, () => flatten(value).join('\n'));
    });

  settings
    .command('set <path> <value>')
    .description('change one setting, e.g. `settings set experimental.enableEnvironments true`')
    .action(async (dotted: string, raw: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      if (!dotted.includes('.')) throw new UsageError('the path names a setting inside a group, e.g. experimental.enableEnvironments');
      const patch: Record<string, unknown> = {};
      setPath(patch, dotted, parseValue(raw));
      const value = await ctx.client.settings.update(patch);
      ctx.print(value, () => flatten(value).join('\n'));
    });
}
