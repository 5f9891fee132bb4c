import type { Command } from 'commander';
import { registerEnvCreate } from './create.ts';
import { registerEnvDelete } from './delete.ts';
import { registerEnvList } from './list.ts';
import { registerEnvRevisions } from './revisions.ts';
import { registerEnvShow } from './show.ts';
import { registerEnvUpdate } from './update.ts';

export function registerEnv(program: Command): void {
  const env = program.command('env').description('manage environments (named provider configurations with revisions)');
  for (const register of [registerEnvList, registerEnvCreate, registerEnvShow, registerEnvUpdate, registerEnvDelete, registerEnvRevisions])
    register(env);
}
