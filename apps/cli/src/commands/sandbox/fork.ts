import { FORK_COUNT_MAX } from '@sandcast/contracts';
import { type Command, InvalidArgumentError } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderSandboxList } from './render.ts';

function forkCount(raw: string): number {
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1 || count > FORK_COUNT_MAX) {
    throw new InvalidArgumentError(`--count must be a whole number from 1 to ${FORK_COUNT_MAX}`);
  }
  return count;
}

export function registerSandboxFork(sandbox: Command): void {
  sandbox
    .command('fork <id>')
    .description("make new sandboxes with a running sandbox's files at this moment (its processes are not copied)")
    .option('--count <n>', `how many (1-${FORK_COUNT_MAX})`, forkCount, 1)
    .action(async (id: string, options: { count: number }, command: Command) => {
      const ctx = contextFrom(command);
      const answer = await ctx.client.sandboxes.fork(id, options.count);
      ctx.print(
        answer,
        () => `forked ${id} into ${answer.sandboxes.length}\n${renderSandboxList(answer.sandboxes, new Map())}\nnote: ${answer.note}`,
      );
    });
}
