import type { ExecBody, ExecResultBody } from '@sandcast/contracts';
import { type Command, Option } from 'commander';
import type { CliContext } from './context.ts';
import { UsageError } from './format.ts';

export interface ExecOptions {
  cwd?: string;
  env?: string[];
  timeout?: string;
}

/** The options `image exec` and `sandbox exec` share: --cwd, --env KEY=VALUE (repeatable), --timeout SECONDS. */
export function addExecOptions(command: Command): Command {
  return command
    .addOption(new Option('--cwd <path>', 'working directory inside the sandbox (absolute); default: the provider’s workspace'))
    .addOption(
      new Option('--env <KEY=VALUE>', 'an environment variable for the command (repeatable)').argParser(
        (value: string, previous: string[] = []) => [...previous, value],
      ),
    )
    .addOption(new Option('--timeout <seconds>', 'stop the command after this many seconds; default: the server’s limit'));
}

/** Builds the exec request body from the words after `--` and the shared options. */
export function execBodyFrom(words: string[], options: ExecOptions): ExecBody {
  if (words.length === 0) throw new UsageError('give the command to run after --, e.g. `-- sh -c "echo hi"`');
  const body: ExecBody = { command: words };
  if (options.cwd !== undefined) body.cwd = options.cwd;
  if (options.env?.length) {
    body.env = {};
    for (const assignment of options.env) {
      const eq = assignment.indexOf('=');
      if (eq <= 0) throw new UsageError(`--env takes KEY=VALUE, got "${assignment}"`);
      body.env[assignment.slice(0, eq)] = assignment.slice(eq + 1);
    }
  }
  if (options.timeout !== undefined) {
    const seconds = Number(options.timeout);
    if (!Number.isFinite(seconds) || seconds <= 0)
      throw new UsageError(`--timeout takes a positive number of seconds, got "${options.timeout}"`);
    body.timeoutMs = Math.round(seconds * 1000);
  }
  return body;
}

/**
 * Passes the command's output through and makes its exit code ours (124 when it timed out, as
 * timeout(1) does). With --json the whole result is printed instead; the exit code is the same.
 */
export function reportExec(ctx: CliContext, result: ExecResultBody): void {
  if (ctx.json) {
    ctx.print(result, () => '');
  } else {
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    if (result.timedOut) process.stderr.write('sandcast: the command timed out and was stopped\n');
  }
  process.exitCode = commandExitCode(result);
}

function commandExitCode(result: Pick<ExecResultBody, 'exitCode' | 'timedOut'>): number {
  if (result.timedOut) return 124;
  return result.exitCode >= 0 && result.exitCode <= 255 ? result.exitCode : 1;
}
