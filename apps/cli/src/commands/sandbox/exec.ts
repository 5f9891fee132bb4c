import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { addExecOptions, type ExecOptions, execBodyFrom, runExec } from '../../exec-command.ts';

export function registerSandboxExec(sandbox: Command): void {
  addExecOptions(
    sandbox
      .command('exec <id> [command...]')
      .usage('[options] <id> -- <command...>')
      .summary('run a command in a sandbox')
      .description(
        'run a command in a sandbox: `sandbox exec sbx_1 -- cat /etc/os-release`. Prints its output as it runs and exits with its exit code (124 when it timed out).',
      ),
  ).action(async (id: string, words: string[], options: ExecOptions, command: Command) => {
    const ctx = contextFrom(command);
    const body = execBodyFrom(words, options);
    await runExec(ctx, {
      json: () => ctx.client.sandboxes.exec(id, body),
      stream: () => ctx.client.sandboxes.execStream(id, body),
    });
  });
}
