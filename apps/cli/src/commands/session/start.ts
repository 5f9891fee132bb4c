import type { StartSessionBody } from '@sandcast/contracts';
import { type Command, Option } from 'commander';
import { contextFrom } from '../../context.ts';
import { applyAssignments, collect, UsageError } from '../../format.ts';
import { parseSeconds } from '../env/spec-options.ts';
import { renderSession } from './render.ts';

interface StartOptions {
  use?: string;
  inlineConfig?: string[];
  inlineBootstrap?: string[];
  inlineIdleAfter?: string;
}

/** What the flags ask of the session's sandbox: nothing (the default binding), a binding, or a one-off spec over one. */
export function sandboxRequestFrom(options: StartOptions): StartSessionBody['sandbox'] {
  const inline: NonNullable<Extract<StartSessionBody['sandbox'], { inline: unknown }>>['inline'] = {};
  if (options.inlineConfig?.length) inline.config = applyAssignments({}, options.inlineConfig, '--inline-config');
  if (options.inlineBootstrap?.length) inline.bootstrap = options.inlineBootstrap;
  if (options.inlineIdleAfter !== undefined)
    inline.lifecycle = { idleAfterSeconds: parseSeconds('--inline-idle-after', options.inlineIdleAfter) };
  if (Object.keys(inline).length > 0) return { inline: options.use === undefined ? inline : { use: options.use, ...inline } };
  if (options.use === '') throw new UsageError('--use takes the name of one of the agent’s bindings');
  return options.use === undefined ? undefined : { use: options.use };
}

export function registerSessionStart(session: Command): void {
  session
    .command('start <agent>')
    .description('start a session of an agent (name or id); its sandbox pins the revision its policy resolves to')
    .addOption(new Option('--use <binding>', 'the binding to use (selectable and configurable agents; default: the agent’s default)'))
    .addOption(
      new Option('--inline-config <key=value>', 'a one-off provider config field (configurable agents; repeatable)').argParser(collect),
    )
    .addOption(
      new Option(
        '--inline-bootstrap <command>',
        'one-off bootstrap commands instead of the binding’s (configurable agents; repeatable)',
      ).argParser(collect),
    )
    .addOption(new Option('--inline-idle-after <seconds>', 'a one-off idle time (configurable agents)'))
    .action(async (idOrName: string, options: StartOptions, command: Command) => {
      const ctx = contextFrom(command);
      const sandbox = sandboxRequestFrom(options);
      const agent = await ctx.client.agents.resolve(idOrName);
      const started = await ctx.client.sessions.start({ agentId: agent.id, ...(sandbox ? { sandbox } : {}) });
      ctx.print(started, () => {
        const next = started.primarySandboxId
          ? [`Run a command: sandcast session exec ${started.id} -- CMD`, `Its sandbox:   sandcast session sandbox ${started.id}`]
          : [];
        return [
          `started session ${started.id}`,
          renderSession(started, { name: agent.name, versionNumber: agent.currentVersion.number }),
          ...next,
          `End it:        sandcast session end ${started.id}`,
        ].join('\n');
      });
    });
}
