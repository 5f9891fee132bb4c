import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderSandbox } from './render.ts';

export function registerSandboxCreate(sandbox: Command): void {
  sandbox
    .command('create <env>')
    .description('create a sandbox from an environment; it boots from the active custom image when that still matches the config')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const environment = await ctx.client.environments.resolve(idOrName);
      const created = await ctx.client.sandboxes.create({ environmentId: environment.id });
      ctx.print(created, () => `created sandbox ${created.id}\n${renderSandbox(created, environment.name)}`);
    });
}
