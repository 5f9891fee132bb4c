import type { Command } from 'commander';
import { registerSandboxCreate } from './create.ts';
import { registerSandboxExec } from './exec.ts';
import { registerSandboxLifecycle } from './lifecycle.ts';
import { registerSandboxList } from './list.ts';
import { registerSandboxPort } from './port/index.ts';
import { registerSandboxRm } from './rm.ts';
import { registerSandboxShow } from './show.ts';

export function registerSandbox(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('create sandboxes from environments, run commands in them, stop and start them, delete them');
  for (const register of [
    registerSandboxList,
    registerSandboxCreate,
    registerSandboxShow,
    registerSandboxExec,
    registerSandboxLifecycle,
    registerSandboxPort,
    registerSandboxRm,
  ])
    register(sandbox);
}
