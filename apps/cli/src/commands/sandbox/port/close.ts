import type { Command } from 'commander';
import { contextFrom } from '../../../context.ts';
import { portArg } from './port-arg.ts';

export function registerPortClose(port: Command): void {
  port
    .command('close <id> <port>')
    .description('stop serving a port: its URL stops answering and open connections close at once')
    .action(async (id: string, value: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const closed = await ctx.client.sandboxes.ports.close(id, portArg(value));
      ctx.print(closed, () => `closed port ${closed.port} of ${closed.sandboxId}`);
    });
}
