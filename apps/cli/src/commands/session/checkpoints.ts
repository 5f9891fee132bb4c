import { type CheckpointBody, formatBytes } from '@sandcast/contracts';
import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { noteRecovery } from '../../exec-command.ts';
import { formatTime, table } from '../../format.ts';
import { progressPrinter } from '../../progress.ts';

function renderCheckpoints(checkpoints: CheckpointBody[], retention: number): string {
  if (checkpoints.length === 0) return 'no checkpoints yet (they are taken after every command and file write of a checkpointed session)';
  const rows = table(
    ['ID', 'TAKEN', 'TRIGGER', 'CHANGED PATHS', 'STORED', 'WORKSPACE', 'FILES', ''],
    checkpoints.map((c) => [
      c.id,
      formatTime(c.createdAt),
      c.trigger,
      String(c.changedPaths),
      formatBytes(c.storedBytes),
      formatBytes(c.totalBytes),
      String(c.fileCount),
      c.current ? 'current' : '',
    ]),
  );
  return `${rows}\n(the newest ${retention} are kept)`;
}

/** `session checkpoint|checkpoints|restore`: the checkpoints of a checkpointed session's sandbox. */
export function registerSessionCheckpoints(session: Command): void {
  session
    .command('checkpoint <id>')
    .description('checkpoint the session’s workspace now (durability checkpointed)')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const answer = await ctx.client.sessions.checkpoint(id);
      noteRecovery(answer.recovered);
      const c = answer.checkpoint;
      ctx.print(answer, () => `checkpoint ${c.id}: ${c.changedPaths} changed paths, ${formatBytes(c.storedBytes)} stored`);
    });

  session
    .command('checkpoints <id>')
    .description('list the checkpoints of the session’s workspace, newest first')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const list = await ctx.client.sessions.checkpoints(id);
      ctx.print(list, () => renderCheckpoints(list.checkpoints, list.retention));
    });

  session
    .command('restore <id> <checkpoint>')
    .description('roll the session’s workspace back to a checkpoint (`session checkpoints` lists them); files written since are gone')
    .action(async (id: string, checkpointId: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const progress = progressPrinter(`restoring ${checkpointId}`);
      const answer = await ctx.client.sessions.restore(id, checkpointId, { onProgress: progress });
      progress.done();
      noteRecovery(answer.recovered);
      ctx.print(answer, () => `workspace restored to checkpoint ${answer.checkpoint.id} (${formatTime(answer.checkpoint.createdAt)})`);
    });
}
