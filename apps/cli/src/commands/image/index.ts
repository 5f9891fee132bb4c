import type { Command } from 'commander';
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
    registerImageRollback,
    registerImageDisable,
    registerImageRelink,
    registerImageProbe,
    registerBaseImageCommands,
  ])
    register(image);
}
