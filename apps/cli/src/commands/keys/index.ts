import type { ApiKey } from '@sandcast/contracts';
import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { formatTime, table, UsageError } from '../../format.ts';

/** Which agents a key may start sessions for: admin keys any, agent keys those listed. */
function describeAllowedAgents(key: ApiKey, agentNames: Map<string, string>): string {
  if (key.role === 'admin') return 'any';
  if (key.allowedAgentIds.length === 0) return 'none';
  return key.allowedAgentIds.map((id) => agentNames.get(id) ?? id).join(', ');
}

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
      const agents = ctx.json ? [] : await ctx.client.agents.list({ includeArchived: true }).catch(() => []);
      const names = new Map(agents.map((a) => [a.id, a.name]));
      ctx.print(list, () =>
        table(
          ['ID', 'NAME', 'ROLE', 'PREFIX', 'AGENTS', 'LAST USED', 'REVOKED'],
          list.map((k) => [
            k.id,
            k.name,
            k.role,
            `${k.prefix}…`,
            describeAllowedAgents(k, names),
            formatTime(k.lastUsedAt, 'never'),
            formatTime(k.revokedAt),
          ]),
        ),
      );
    });

  keys
    .command('allow-agents <id> [agents...]')
    .description('set which agents (names or ids) an agent key may start sessions for; --none allows none')
    .option('--none', 'allow no agent')
    .action(async (id: string, agents: string[], options: { none?: boolean }, command: Command) => {
      const ctx = contextFrom(command);
      if (options.none && agents.length > 0) throw new UsageError('give agents or --none, not both');
      if (!options.none && agents.length === 0) throw new UsageError('name the agents the key may start sessions for, or pass --none');
      const resolved = await Promise.all(agents.map((a) => ctx.client.agents.resolve(a)));
      const key = await ctx.client.keys.setAllowedAgents(id, [...new Set(resolved.map((a) => a.id))]);
      const names = new Map(resolved.map((a) => [a.id, a.name]));
      ctx.print(key, () => `key ${key.id} (${key.name}) may start sessions for: ${describeAllowedAgents(key, names)}`);
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
