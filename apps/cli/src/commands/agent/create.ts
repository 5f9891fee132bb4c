import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { clearable } from '../../format.ts';
import { type AgentOptions, addAgentOptions, applyPolicyChanges, policyChangesFrom } from './agent-options.ts';
import { renderAgent } from './render.ts';
import { revisionIndex } from './revision-index.ts';

export function registerAgentCreate(agent: Command): void {
  addAgentOptions(
    agent
      .command('create <name>')
      .description('create an agent: `agent create coder --mode selectable --bind scratch=dev --bind build=build@3 --default scratch`'),
    { update: false },
  ).action(async (name: string, options: AgentOptions, command: Command) => {
    const ctx = contextFrom(command);
    const sandboxPolicy = applyPolicyChanges(undefined, await policyChangesFrom(ctx.client, options));
    const created = await ctx.client.agents.create({
      name,
      displayName: clearable(options.displayName),
      description: clearable(options.description),
      sandboxPolicy,
      capabilities: options.fleet ? ['sandbox_fleet'] : [],
    });
    const index = ctx.json
      ? new Map()
      : await revisionIndex(
          ctx.client,
          Object.values(sandboxPolicy.bindings ?? {}).map((b) => b.environmentRevisionId),
        );
    ctx.print(
      created,
      () => `created agent ${created.name} (version ${created.currentVersion.number})\n${renderAgent(created, [], index)}`,
    );
  });
}
