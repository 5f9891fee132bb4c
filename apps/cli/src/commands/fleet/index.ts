import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { addExecOptions, type ExecOptions, execBodyFrom } from '../../exec-command.ts';
import { renderFleetList, renderFleetSandbox } from './render.ts';

/** `sandcast fleet …`: a session's resource sandboxes, by their ids (`rsb_…`). */
export function registerFleet(program: Command): void {
  const fleet = program
    .command('fleet')
    .description(
      'resource sandboxes of a session (agents with the sandbox_fleet capability): create, run, move files, stop, start, remove',
    );

  fleet
    .command('list <session>')
    .description('list the session’s resource sandboxes')
    .action(async (session: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const sandboxes = await ctx.client.fleet.list(session);
      ctx.print(sandboxes, () => renderFleetList(sandboxes));
    });

  fleet
    .command('create <session>')
    .description('create a resource sandbox from a binding of the agent (default: the policy’s default)')
    .option('--use <name>', 'a binding name, or the name of an environment a binding pins')
    .action(async (session: string, options: { use?: string }, command: Command) => {
      const ctx = contextFrom(command);
      const created = await ctx.client.fleet.create(session, options.use ? { use: options.use } : {});
      ctx.print(created, () => renderFleetSandbox(created));
    });

  fleet
    .command('show <session> <sandbox>')
    .description('show one resource sandbox')
    .action(async (session: string, id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const sandbox = await ctx.client.fleet.inspect(session, id);
      ctx.print(sandbox, () => renderFleetSandbox(sandbox));
    });

  addExecOptions(
    fleet
      .command('exec <session> <sandbox> [command...]')
      .usage('[options] <session> <sandbox> -- <command...>')
      .description('run a command in a resource sandbox and exit with its exit code'),
  ).action(async (session: string, id: string, words: string[], options: ExecOptions, command: Command) => {
    const ctx = contextFrom(command);
    // Resource sandboxes answer exec once, when the command ends (no NDJSON stream).
    const result = await ctx.client.fleet.exec(session, id, execBodyFrom(words, options));
    if (ctx.json) ctx.print(result, () => '');
    else {
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
    }
    process.exitCode = result.timedOut ? 124 : result.exitCode;
  });

  fleet
    .command('read <session> <sandbox> <path>')
    .description('print a file of a resource sandbox (base64 when it is not UTF-8 text)')
    .action(async (session: string, id: string, path: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const file = await ctx.client.fleet.readFile(session, id, path);
      ctx.print(file, () => file.content);
    });

  fleet
    .command('write <session> <sandbox> <path>')
    .description('write a file of a resource sandbox from a local file')
    .requiredOption('--from <file>', 'the local file to copy')
    .action(async (session: string, id: string, path: string, options: { from: string }, command: Command) => {
      const ctx = contextFrom(command);
      const content = (await readFile(options.from)).toString('base64');
      const written = await ctx.client.fleet.writeFile(session, id, path, { content, encoding: 'base64' });
      ctx.print(written, () => `wrote ${written.sizeBytes} bytes to ${written.path}`);
    });

  fleet
    .command('checkpoint <session> <sandbox>')
    .description('checkpoint a resource sandbox’s workspace (durability checkpointed)')
    .action(async (session: string, id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const answer = await ctx.client.fleet.checkpoint(session, id);
      ctx.print(
        answer,
        () =>
          `checkpoint ${answer.checkpoint.id} of ${id}: ${answer.checkpoint.changedPaths} paths changed, ${answer.checkpoint.storedBytes} bytes stored`,
      );
    });

  for (const [verb, action, summary] of [
    ['stop', 'stop', 'stop a resource sandbox (its files stay)'],
    ['start', 'start', 'start a stopped resource sandbox again'],
    ['rm', 'delete', 'delete a resource sandbox and its compute'],
    ['restore', 'restore', 'restore a resource sandbox’s workspace to a checkpoint (default: the last)'],
  ] as const) {
    const sub = fleet.command(`${verb} <session> <sandbox>`).description(summary);
    if (action === 'restore') sub.option('--checkpoint <id>', 'the checkpoint to go back to');
    sub.action(async (session: string, id: string, options: { checkpoint?: string }, command: Command) => {
      const ctx = contextFrom(command);
      const answer = await ctx.client.fleet.manage(session, id, {
        action,
        ...(options.checkpoint ? { checkpointId: options.checkpoint } : {}),
      });
      ctx.print(answer, () => renderFleetSandbox(answer));
    });
  }
}
