import type { Command } from 'commander';
import { registerPortCommands } from '../port/port-commands.ts';
import { registerBaseImageCommands } from './base-images.ts';
import { registerImageCancel } from './cancel.ts';
import { registerImageChanges } from './changes.ts';
import { registerImageDisable } from './disable.ts';
import { registerImageExec } from './exec.ts';
import { registerImageFinish } from './finish.ts';
import { registerImageHistory } from './history.ts';
import { registerImageProbe } from './probe.ts';
import { registerImageRelink } from './relink.ts';
import { registerImageRollback } from './rollback.ts';
import { resolveSessionTarget } from './session-target.ts';
import { registerImageSetup } from './setup.ts';
import { registerImageStatus } from './status.ts';

export function registerImage(program: Command): void {
  const image = program
    .command('image')
    .description(
      'custom images: prepare a sandbox once (setup), capture it, and let every run of the environment boot from it; and base images (list, import, build-base, export, rm)',
    );
  for (const register of [
    registerImageStatus,
    registerImageHistory,
    registerImageSetup,
    registerImageExec,
    registerImageChanges,
    registerImageFinish,
    registerImageCancel,
    (parent: Command) =>
      registerPortCommands(parent, {
        command: 'sandcast image port',
        argument: '<target>',
        noun: 'setup sandbox',
        argumentHelp: 'an environment (its running setup session) or a setup session id',
        resolve: async (client, target) => {
          const { session } = await resolveSessionTarget(client, target);
          return { id: session.id, label: `setup session ${session.id}` };
        },
        calls: (client) => client.customImages.ports,
      }),
    registerImageRollback,
    registerImageDisable,
    registerImageRelink,
    registerImageProbe,
    registerBaseImageCommands,
  ])
    register(image);
}
