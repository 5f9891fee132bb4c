import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { renderSession } from './render.ts';

export function registerSessionShow(session: Command): void {
  session
    .command('show <id>')
    .description('show a session: its agent and version, the binding it resolved to, its sandbox')
    .action(async (id: string, _options, command: Command) => {
      const ctx = contextFrom(command);
      const found = await ctx.client.sessions.get(id);
      if (ctx.json) return ctx.print(found, () => '');
      // The agent's name and version number read better than ids; the ids do when they cannot be had.
      const [agent, versions] = await Promise.all([
        ctx.client.agents.get(found.agentId).catch(() => undefined),
        ctx.client.agents.versions(found.agentId).catch(() => []),
      ]);
      const versionNumber = versions.find((v) => v.id === found.agentVersionId)?.number;
      ctx.print(found, () => renderSession(found, agent ? { name: agent.name, versionNumber } : undefined));
    });
}
