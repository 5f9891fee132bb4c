import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderSandbox } from './render.ts';

/** `sandbox stop` and `sandbox start`: ask for a state; the reconciler moves the sandbox there. */
export function registerSandboxStopStart(sandbox: Command): void {
  for (const verb of ['stop', 'start'] as const) {
    sandbox
      .command(`${verb} <id>`)
      .description(
        verb === 'stop'
          ? 'stop a sandbox: its compute is released; its id and pinned spec stay, and `sandbox start` brings it back'
          : 'start a stopped sandbox again: same id and spec (the generation goes up when its compute is replaced)',
      )
      .action(async (id: string, _options, command: Command) => {
        const ctx = contextFrom(command);
        const changed = await ctx.client.sandboxes[verb](id);
        ctx.print(changed, () => `${verb === 'stop' ? 'stopping' : 'starting'} sandbox ${changed.id}\n${renderSandbox(changed)}`);
      });
  }
}
