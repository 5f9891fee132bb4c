import type { Command } from 'commander';
import { contextFrom } from '../../../context.ts';
import { portArg } from './port-arg.ts';

export function registerPortOpen(port: Command): void {
  port
    .command('open <id> <port>')
    .description('serve a port a process inside the sandbox listens on as a URL (private unless --public)')
    .option('--public', 'anyone who can reach the URL may use it (needs the instance setting security.allowPublicPorts)')
    .action(async (id: string, value: string, options: { public?: boolean }, command: Command) => {
      const ctx = contextFrom(command);
      const opened = await ctx.client.sandboxes.ports.open(id, { port: portArg(value), visibility: options.public ? 'public' : 'private' });
      ctx.print(
        opened,
        () =>
          `opened port ${opened.port} of ${opened.sandboxId} (${opened.visibility}): ${opened.baseUrl}` +
          (opened.visibility === 'private' ? `\nits URL with a token: sandcast sandbox port url ${id} ${opened.port}` : ''),
      );
    });
}
