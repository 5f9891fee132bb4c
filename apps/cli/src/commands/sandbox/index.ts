import type { Command } from 'commander';
import { registerPortCommands } from '../port/port-commands.ts';
import { registerSandboxCreate } from './create.ts';
import { registerSandboxExec } from './exec.ts';
import { registerSandboxFork } from './fork.ts';
import { registerSandboxLifecycle } from './lifecycle.ts';
import { registerSandboxList } from './list.ts';
import { registerSandboxRm } from './rm.ts';
import { registerSandboxShow } from './show.ts';

export function registerSandbox(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('create sandboxes from environments, run commands in them, fork, stop and start them, delete them');
  for (const register of [
    registerSandboxList,
    registerSandboxCreate,
    registerSandboxShow,
    registerSandboxExec,
    registerSandboxFork,
    registerSandboxLifecycle,
    (parent: Command) =>
      registerPortCommands(parent, {
        command: 'sandcast sandbox port',
        argument: '<id>',
        noun: 'sandbox',
        argumentHelp: 'the sandbox id',
        resolve: async (_client, id) => ({ id, label: id }),
        calls: (client) => client.sandboxes.ports,
      }),
    registerSandboxRm,
  ])
    register(sandbox);
}
