import type { Command } from 'commander';
import { contextFrom } from '../../../context.ts';

export function registerPortList(port: Command): void {
  port
    .command('list <id>')
    .description("list a sandbox's open ports")
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const ports = await ctx.client.sandboxes.ports.list(id);
      ctx.print(ports, () =>
        ports.length === 0
          ? `no open ports on ${id}`
          : ports.map((p) => `${String(p.port).padEnd(6)} ${p.visibility.padEnd(8)} ${p.baseUrl}`).join('\n'),
      );
    });
}
