import type { Command } from 'commander';
import { contextFrom } from '../../../context.ts';
import { portArg } from './port-arg.ts';

export function registerPortUrl(port: Command): void {
  port
    .command('url <id> <port>')
    .description("print an open port's URL; a private port's carries a token that expires (open it once in a browser)")
    .action(async (id: string, value: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const answer = await ctx.client.sandboxes.ports.url(id, portArg(value));
      ctx.print(answer, () => answer.url);
    });
}
