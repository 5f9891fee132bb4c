import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { table } from '../../format.ts';

export function registerTargets(program: Command): void {
  program
    .command('targets')
    .description('list the sandbox providers this server offers and whether each can run here')
    .action(async (_options, command: Command) => {
      const ctx = contextFrom(command);
      const targets = await ctx.client.targets();
      ctx.print(targets, () =>
        table(
          ['PROVIDER', 'NAME', 'AVAILABLE', 'CUSTOM IMAGES'],
          targets.map((t) => [
            t.provider,
            t.displayName,
            t.available ? 'yes' : `no: ${t.unavailableReason ?? 'unknown reason'}`,
            t.capabilities.templateCapture ? String(t.capabilities.templateRefKind) : '-',
          ]),
        ),
      );
    });
}
