import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { addExecOptions, type ExecOptions, execBodyFrom, runExec } from '../../exec-command.ts';
import { resolveSessionTarget } from './session-target.ts';

export function registerImageExec(image: Command): void {
  addExecOptions(
    image
      .command('exec <target> [command...]')
      .usage('[options] <env|session-id> -- <command...>')
      .summary('run a command in the setup sandbox (scripted setup)')
      .description(
        'run a command in the setup sandbox (scripted setup): `image exec build -- sh -c "apt-get install -y jq"`. ' +
          'Prints its output as it runs and exits with its exit code (124 when it timed out).',
      ),
  ).action(async (target: string, words: string[], options: ExecOptions, command: Command) => {
    const ctx = contextFrom(command);
    const body = execBodyFrom(words, options);
    const { session } = await resolveSessionTarget(ctx.client, target);
    await runExec(ctx, {
      json: () => ctx.client.customImages.exec(session.id, body),
      stream: () => ctx.client.customImages.execStream(session.id, body),
    });
  });
}
