import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { applyAssignments } from '../../format.ts';
import { configOption, parseConfigJson, setOption } from './config-options.ts';
import { renderEnvironment } from './render.ts';

export function registerEnvCreate(env: Command): void {
  env
    .command('create <name>')
    .description('create an environment: `env create build --provider local --set image=debian`')
    .requiredOption('--provider <id>', 'sandbox provider (see `sandcast targets`)')
    .addOption(configOption())
    .addOption(setOption())
    .option('--connection <connection>', 'the provider connection (name or id) for providers that need one')
    .action(async (name: string, options: { provider: string; config?: string; set?: string[]; connection?: string }, command: Command) => {
      const ctx = contextFrom(command);
      const config = applyAssignments(parseConfigJson(options.config) ?? {}, options.set ?? []);
      const connectionId = options.connection ? (await ctx.client.connections.resolve(options.connection)).id : undefined;
      const created = await ctx.client.environments.create({ name, provider: options.provider, config, connectionId });
      ctx.print(created, () => `created environment ${created.name} (revision 1)\n${renderEnvironment(created)}`);
    });
}
