import type { ConnectionBody } from '@sandcast/contracts';
import { type Command, Option } from 'commander';
import { contextFrom } from '../../context.ts';
import { applyAssignments, formatTime, setPath, table, UsageError } from '../../format.ts';
import { setOption } from '../env/config-options.ts';

const repeatable = (value: string, previous: string[] = []) => [...previous, value];

/** `--secret key=value` and `--secret-env key=VARIABLE` (the value never on the command line). */
function secretsFrom(options: { secret?: string[]; secretEnv?: string[] }): Record<string, unknown> {
  const secrets: Record<string, unknown> = {};
  for (const assignment of options.secret ?? []) {
    const eq = assignment.indexOf('=');
    if (eq <= 0) throw new UsageError(`--secret takes key=value, got "${assignment.slice(0, Math.max(eq, 0)) || '…'}"`);
    setPath(secrets, assignment.slice(0, eq), assignment.slice(eq + 1));
  }
  for (const assignment of options.secretEnv ?? []) {
    const eq = assignment.indexOf('=');
    if (eq <= 0) throw new UsageError(`--secret-env takes key=VARIABLE, got "${assignment}"`);
    const variable = assignment.slice(eq + 1);
    const value = process.env[variable];
    if (value === undefined) throw new UsageError(`--secret-env ${assignment}: the environment variable ${variable} is not set`);
    setPath(secrets, assignment.slice(0, eq), value);
  }
  return secrets;
}

const secretOptions = (command: Command) =>
  command
    .addOption(new Option('--secret <key=value>', 'set one secret field (repeatable); prefer --secret-env').argParser(repeatable))
    .addOption(
      new Option('--secret-env <key=VARIABLE>', 'set one secret field from an environment variable (repeatable)').argParser(repeatable),
    );

function renderConnection(c: ConnectionBody): string {
  const config = Object.entries(c.config).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`);
  const secrets = Object.keys(c.secrets).map((k) => `  ${k}: (set, never shown)`);
  return [
    `${c.name}  ${c.id}`,
    `provider: ${c.provider}`,
    'config:',
    ...(config.length ? config : ['  (none)']),
    'secrets:',
    ...(secrets.length ? secrets : ['  (none)']),
    `updated: ${formatTime(c.updatedAt)}`,
  ].join('\n');
}

type SecretFlags = { secret?: string[]; secretEnv?: string[] };

export function registerConnection(program: Command): void {
  const connection = program
    .command('connection')
    .description('manage provider connections: the accounts connected providers (Daytona) run sandboxes in');

  secretOptions(
    connection
      .command('create <name>')
      .description('create a connection: `connection create dt --provider daytona --secret-env apiKey=DAYTONA_API_KEY`')
      .requiredOption('--provider <id>', 'a provider that uses connections (see `sandcast targets`)')
      .addOption(setOption()),
  ).action(async (name: string, options: { provider: string; set?: string[] } & SecretFlags, command: Command) => {
    const ctx = contextFrom(command);
    const created = await ctx.client.connections.create({
      name,
      provider: options.provider,
      config: applyAssignments({}, options.set ?? []),
      secrets: secretsFrom(options),
    });
    ctx.print(created, () => `created connection ${created.name}\n${renderConnection(created)}`);
  });

  connection
    .command('list')
    .description('list connections (never their secrets)')
    .action(async (_options, command: Command) => {
      const ctx = contextFrom(command);
      const list = await ctx.client.connections.list();
      ctx.print(list, () =>
        list.length === 0
          ? 'no connections; create one with `sandcast connection create <name> --provider daytona …`'
          : table(
              ['NAME', 'PROVIDER', 'ID', 'SECRETS', 'UPDATED'],
              list.map((c) => [c.name, c.provider, c.id, Object.keys(c.secrets).join(', ') || '-', formatTime(c.updatedAt)]),
            ),
      );
    });

  connection
    .command('show <connection>')
    .description('show one connection by name or id')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const found = await ctx.client.connections.resolve(idOrName);
      ctx.print(found, () => renderConnection(found));
    });

  secretOptions(
    connection
      .command('update <connection>')
      .description('change a connection; secrets not named keep their value')
      .option('--name <name>', 'rename it')
      .addOption(setOption()),
  ).action(async (idOrName: string, options: { name?: string; set?: string[] } & SecretFlags, command: Command) => {
    const ctx = contextFrom(command);
    const current = await ctx.client.connections.resolve(idOrName);
    const secrets = secretsFrom(options);
    const body = {
      ...(options.name ? { name: options.name } : {}),
      ...(options.set?.length ? { config: applyAssignments(current.config, options.set) } : {}),
      ...(Object.keys(secrets).length ? { secrets } : {}),
    };
    if (Object.keys(body).length === 0) throw new UsageError('nothing to change: pass --name, --set, --secret or --secret-env');
    const updated = await ctx.client.connections.update(current.id, body);
    ctx.print(updated, () => `updated connection ${updated.name}\n${renderConnection(updated)}`);
  });

  connection
    .command('test <connection>')
    .description('check the connection reaches its provider with its credentials (exit 1 when not)')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const found = await ctx.client.connections.resolve(idOrName);
      const answer = await ctx.client.connections.test(found.id);
      ctx.print(answer, () => (answer.ok ? `connection ${found.name} works` : `connection ${found.name} does not work: ${answer.reason}`));
      if (!answer.ok) process.exitCode = 1;
    });

  connection
    .command('rm <connection>')
    .description('delete a connection no environment uses')
    .action(async (idOrName: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const found = await ctx.client.connections.resolve(idOrName);
      const deleted = await ctx.client.connections.delete(found.id);
      ctx.print(deleted, () => `deleted connection ${deleted.name}`);
    });
}
