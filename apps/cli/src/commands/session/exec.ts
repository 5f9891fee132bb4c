import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { addExecOptions, type ExecOptions, execBodyFrom, runExec } from '../../exec-command.ts';

export function registerSessionExec(session: Command): void {
  addExecOptions(
    session
      .command('exec <id> [command...]')
      .usage('[options] <id> -- <command...>')
      .summary('run a command in a session’s sandbox')
      .description(
        'run a command in a session’s sandbox: `session exec ses_1 -- make test`. Prints its output as it runs and exits with its exit code (124 when it timed out).',
      ),
  ).action(async (id: string, words: string[], options: ExecOptions, command: Command) => {
    const ctx = contextFrom(command);
    const body = execBodyFrom(words, options);
    await runExec(ctx, {
      json: () => ctx.client.sessions.exec(id, body),
      stream: () => ctx.client.sessions.execStream(id, body),
    });
  });
}
