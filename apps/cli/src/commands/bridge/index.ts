import type { BridgeUpstreamBody } from '@sandcast/contracts';
import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { formatTime, table, UsageError } from '../../format.ts';

const repeatable = (value: string, previous: string[] = []) => [...previous, value];

function renderUpstream(u: BridgeUpstreamBody): string {
  return [
    u.name,
    `base URL: ${u.baseUrl}`,
    `allowed paths: ${u.allowedPaths.join(' ')}`,
    'credential: (set, never shown)',
    `updated: ${formatTime(u.updatedAt)}`,
  ].join('\n');
}

type SetFlags = { baseUrl?: string; path?: string[]; credentialEnv?: string };

export function registerBridge(program: Command): void {
  const bridge = program.command('bridge').description('the host bridge sandboxes call through ($SANDCAST_BRIDGE_URL)');
  const upstream = bridge
    .command('upstream')
    .description(
      'manage upstreams: services a sandbox reaches as $SANDCAST_BRIDGE_URL/upstreams/<name>/..., the credential added on the host',
    );

  upstream
    .command('list')
    .description('list upstreams (never their credentials)')
    .action(async (_options, command: Command) => {
      const ctx = contextFrom(command);
      const list = await ctx.client.bridgeUpstreams.list();
      ctx.print(list, () =>
        list.length === 0
          ? 'no upstreams; add one with `sandcast bridge upstream set <name> --base-url <url> --path </prefix/*> --credential-env <VARIABLE>`'
          : table(
              ['NAME', 'BASE URL', 'ALLOWED PATHS', 'UPDATED'],
              list.map((u) => [u.name, u.baseUrl, u.allowedPaths.join(' '), formatTime(u.updatedAt)]),
            ),
      );
    });

  upstream
    .command('set <name>')
    .description('create or replace an upstream; options left out keep their current value')
    .option('--base-url <url>', 'the http(s) URL bridged paths are appended to')
    .option('--path <path>', 'an allowed path: exact, or a prefix ending in /* (repeatable; replaces the list)', repeatable)
    .option('--credential-env <VARIABLE>', 'read the credential (sent as a Bearer token) from this environment variable')
    .action(async (name: string, options: SetFlags, command: Command) => {
      const ctx = contextFrom(command);
      let credential: string | undefined;
      if (options.credentialEnv !== undefined) {
        credential = process.env[options.credentialEnv];
        if (credential === undefined)
          throw new UsageError(`--credential-env: the environment variable ${options.credentialEnv} is not set`);
      }
      const current = (await ctx.client.bridgeUpstreams.list()).find((u) => u.name === name);
      const baseUrl = options.baseUrl ?? current?.baseUrl;
      const allowedPaths = options.path ?? current?.allowedPaths;
      if (!current && (baseUrl === undefined || allowedPaths === undefined || credential === undefined))
        throw new UsageError(`upstream ${name} is new: pass --base-url, --path and --credential-env`);
      const saved = await ctx.client.bridgeUpstreams.put(name, {
        baseUrl: baseUrl as string,
        allowedPaths: allowedPaths as string[],
        ...(credential !== undefined ? { credential } : {}),
      });
      ctx.print(saved, () => `${current ? 'updated' : 'created'} upstream ${saved.name}\n${renderUpstream(saved)}`);
    });

  upstream
    .command('rm <name>')
    .description('delete an upstream; sandboxes stop reaching it at once')
    .action(async (name: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const deleted = await ctx.client.bridgeUpstreams.delete(name);
      ctx.print(deleted, () => `deleted upstream ${deleted.name}`);
    });
}
