import type { SandcastClient } from '@sandcast/client';
import { type OpenPort, type OpenPortBody, PortNumberSchema, type PortUrl } from '@sandcast/contracts';
import type { Command } from 'commander';
import { type CliContext, contextFrom } from '../../context.ts';
import { UsageError } from '../../format.ts';

/** The port calls of the client for one kind of owner (a sandbox, a setup session). */
interface PortsCalls {
  list(id: string): Promise<OpenPort[]>;
  open(id: string, body: OpenPortBody): Promise<OpenPort>;
  url(id: string, port: number): Promise<PortUrl>;
  close(id: string, port: number): Promise<OpenPort>;
}

/** What `port open|url|close|list` act on: how the owner is named and found. */
export interface PortOwnerCommands {
  /** The command that holds the verbs, for hints (`sandcast sandbox port`). */
  command: string;
  /** The argument that names the owner, e.g. `<id>` or `<target>`. */
  argument: string;
  /** How the owner is called in help and output ("sandbox", "setup sandbox"). */
  noun: string;
  /** What the argument may be, for help. */
  argumentHelp: string;
  /** The owner's id (and how to print it) for the argument; its client calls. */
  resolve(client: SandcastClient, target: string): Promise<{ id: string; label: string }>;
  calls(client: SandcastClient): PortsCalls;
}

/** A port argument: a whole number from 1 to 65535. */
function portArg(value: string): number {
  const parsed = PortNumberSchema.safeParse(/^\d+$/.test(value) ? Number(value) : Number.NaN);
  if (!parsed.success) throw new UsageError(`the port must be a whole number from 1 to 65535, got "${value}"`);
  return parsed.data;
}

/** `… port open|url|close|list`, the same verbs for every owner of ports. */
export function registerPortCommands(parent: Command, owner: PortOwnerCommands): void {
  const port = parent.command('port').description(`serve a ${owner.noun}'s ports as URLs; ${owner.argument} is ${owner.argumentHelp}`);
  const { argument } = owner;
  const act = async (command: Command, target: string) => {
    const ctx: CliContext = contextFrom(command);
    return { ctx, calls: owner.calls(ctx.client), ...(await owner.resolve(ctx.client, target)) };
  };

  port
    .command(`open ${argument} <port>`)
    .description(`serve a port a process inside the ${owner.noun} listens on as a URL (private unless --public)`)
    .option('--public', 'anyone who can reach the URL may use it (needs the instance setting security.allowPublicPorts)')
    .action(async (target: string, value: string, options: { public?: boolean }, command: Command) => {
      const number = portArg(value);
      const { ctx, calls, id, label } = await act(command, target);
      const opened = await calls.open(id, { port: number, visibility: options.public ? 'public' : 'private' });
      ctx.print(
        opened,
        () =>
          `opened port ${opened.port} of ${label} (${opened.visibility}): ${opened.baseUrl}` +
          (opened.visibility === 'private' ? `\nits URL with a token: ${owner.command} url ${target} ${opened.port}` : ''),
      );
    });

  port
    .command(`url ${argument} <port>`)
    .description("print an open port's URL; a private port's carries a token that expires (open it once in a browser)")
    .action(async (target: string, value: string, _options, command: Command) => {
      const number = portArg(value);
      const { ctx, calls, id } = await act(command, target);
      const answer = await calls.url(id, number);
      ctx.print(answer, () => answer.url);
    });

  port
    .command(`close ${argument} <port>`)
    .description('stop serving a port: its URL stops answering and open connections close at once')
    .action(async (target: string, value: string, _options, command: Command) => {
      const number = portArg(value);
      const { ctx, calls, id, label } = await act(command, target);
      const closed = await calls.close(id, number);
      ctx.print(closed, () => `closed port ${closed.port} of ${label}`);
    });

  port
    .command(`list ${argument}`)
    .description(`list a ${owner.noun}'s open ports`)
    .action(async (target: string, _options, command: Command) => {
      const { ctx, calls, id, label } = await act(command, target);
      const ports = await calls.list(id);
      ctx.print(ports, () =>
        ports.length === 0
          ? `no open ports on ${label}`
          : ports.map((p) => `${String(p.port).padEnd(6)} ${p.visibility.padEnd(8)} ${p.baseUrl}`).join('\n'),
      );
    });
}
