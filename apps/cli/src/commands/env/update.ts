import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { applyAssignments, UsageError } from '../../format.ts';
import { configOption, parseConfigJson, setOption } from './config-options.ts';
import { describeReconciliation, renderEnvironment } from './render.ts';

export function registerEnvUpdate(env: Command): void {
  env
    .command('update <env>')
    .description('change an environment; a provider or config change makes a new revision')
    .option('--name <name>', 'rename it')
    .option('--provider <id>', 'move it to another provider')
    .addOption(configOption())
    .addOption(setOption())
    .option('--connection <connection>', 'use another provider connection (name or id)')
    .action(
      async (
        idOrName: string,
        options: { name?: string; provider?: string; config?: string; set?: string[]; connection?: string },
        command: Command,
      ) => {
        const ctx = contextFrom(command);
        const current = await ctx.client.environments.resolve(idOrName);
        const replaced = parseConfigJson(options.config);
        // --set edits the current config (its secrets travel back as placeholders, which keep them).
        const config = options.set?.length ? applyAssignments(replaced ?? current.config, options.set) : replaced;
        if (options.name === undefined && options.provider === undefined && config === undefined && options.connection === undefined) {
          throw new UsageError('nothing to change: pass --name, --provider, --config, --set or --connection');
        }
        const connectionId = options.connection ? (await ctx.client.connections.resolve(options.connection)).id : undefined;
        const updated = await ctx.client.environments.update(current.id, {
          name: options.name,
          provider: options.provider,
          config,
          connectionId,
        });
        const note =
          updated.currentRevision.number === current.currentRevision.number
            ? 'no new revision'
            : `revision ${current.currentRevision.number} → ${updated.currentRevision.number}`;
        ctx.print(updated, () =>
          [
            `updated ${updated.name} (${note})`,
            renderEnvironment(updated),
            ...describeReconciliation(updated.name, updated.customImageReconciliation),
          ].join('\n'),
        );
      },
    );
}
