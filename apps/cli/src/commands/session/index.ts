import type { Command } from 'commander';
import { registerSessionCheckpoints } from './checkpoints.ts';
import { registerSessionEnd } from './end.ts';
import { registerSessionExec } from './exec.ts';
import { registerSessionList } from './list.ts';
import { registerSessionSandbox } from './sandbox.ts';
import { registerSessionShow } from './show.ts';
import { registerSessionStart } from './start.ts';
import { registerSessionStopResume } from './stop.ts';

export function registerSession(program: Command): void {
  const session = program.command('session').description('start agent sessions, run commands in their sandbox, stop, resume and end them');
  for (const register of [
    registerSessionList,
    registerSessionStart,
    registerSessionShow,
    registerSessionSandbox,
    registerSessionExec,
    registerSessionStopResume,
    registerSessionCheckpoints,
    registerSessionEnd,
  ])
    register(session);
}
