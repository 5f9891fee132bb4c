import { type ExecStream, frameBytes } from '@sandcast/client';
import type { ExecBody, ExecResultBody, SandboxRecovered } from '@sandcast/contracts';
import { type Command, Option } from 'commander';
import type { CliContext } from './context.ts';
import { collect, UsageError } from './format.ts';

export interface ExecOptions {
  cwd?: string;
  env?: string[];
  timeout?: string;
}

/** The options `image exec` and `sandbox exec` share: --cwd, --env KEY=VALUE (repeatable), --timeout SECONDS. */
export function addExecOptions(command: Command): Command {
  return command
    .addOption(new Option('--cwd <path>', 'working directory inside the sandbox (absolute); default: the provider’s workspace'))
    .addOption(new Option('--env <KEY=VALUE>', 'an environment variable for the command (repeatable)').argParser(collect))
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

/** Writes bytes to a stream, waiting while it is full (a slow pipe slows the command down). */
async function writeOut(stream: NodeJS.WriteStream, bytes: Uint8Array): Promise<void> {
  if (stream.write(bytes)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/**
 * Runs the command and makes its exit code ours (124 when it timed out, as timeout(1) does).
 * Output is passed through as it arrives; with --json the whole result is printed at the end
 * instead (the JSON answer, capped per stream by the server — a note on stderr says so).
 */
/** One line on stderr when the sandbox's compute had to be replaced before the answer. */
export function noteRecovery(recovered: SandboxRecovered | undefined): void {
  if (!recovered) return;
  const restored = recovered.checkpointId
    ? `its workspace restored from checkpoint ${recovered.checkpointId}`
    : 'no checkpoint to restore yet';
  process.stderr.write(
    `sandcast: the sandbox's compute was lost and replaced (generation ${recovered.fromGeneration} → ${recovered.toGeneration}, ${restored}); running processes and their memory were lost\n`,
  );
}

export async function runExec(
  ctx: CliContext,
  run: { json: () => Promise<ExecResultBody & { recovered?: SandboxRecovered }>; stream: () => ExecStream },
): Promise<void> {
  if (ctx.json) {
    const result = await run.json();
    noteRecovery(result.recovered);
    ctx.print(result, () => '');
    for (const stream of ['stdout', 'stderr'] as const) {
      if (result.truncated[stream])
        process.stderr.write(
          `sandcast: ${stream} was cut at ${result[stream].length} characters of ${result.totalBytes[stream]} bytes (the server's cap, SANDCAST_EXEC_OUTPUT_MAX_BYTES); run without --json to get all of it\n`,
        );
    }
    process.exitCode = commandExitCode(result);
    return;
  }
  for await (const frame of run.stream()) {
    switch (frame.type) {
      case 'stdout':
        await writeOut(process.stdout, frameBytes(frame));
        break;
      case 'stderr':
        await writeOut(process.stderr, frameBytes(frame));
        break;
      case 'exit':
        noteRecovery(frame.recovered);
        if (frame.timedOut) process.stderr.write('sandcast: the command timed out and was stopped\n');
        process.exitCode = commandExitCode(frame);
        return;
      case 'error':
        // The client throws on error frames; never reached.
        break;
    }
  }
  throw new Error("the server ended the output without the command's exit; run it again");
}

function commandExitCode(result: Pick<ExecResultBody, 'exitCode' | 'timedOut'>): number {
  if (result.timedOut) return 124;
  return result.exitCode >= 0 && result.exitCode <= 255 ? result.exitCode : 1;
}
