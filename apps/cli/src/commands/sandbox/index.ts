import type { Command } from 'commander';
import { registerSandboxCreate } from './create.ts';
import { registerSandboxExec } from './exec.ts';
import { registerSandboxList } from './list.ts';
import { registerSandboxPort } from './port/index.ts';
import { registerSandboxRm } from './rm.ts';
import { registerSandboxShow } from './show.ts';
import { registerSandboxStopStart } from './stop.ts';

export function registerSandbox(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('create sandboxes from environments, run commands in them, stop, start and delete them');
  for (const register of [
    registerSandboxList,
    registerSandboxCreate,
    registerSandboxShow,
    registerSandboxExec,
    registerSandboxStopStart,
    registerSandboxPort,
    registerSandboxRm,
  ])
    register(sandbox);
}
