import type { UpdateAgentBody } from '@sandcast/contracts';
import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';
import { clearable, UsageError } from '../../format.ts';
import {
  type AgentOptions,
  addAgentOptions,
  applyPolicyChanges,
  hasPolicyChanges,
  policyChangesFrom,
  samePolicy,
} from './agent-options.ts';
import { describeAgentChanges } from './render.ts';
import { revisionIndex } from './revision-index.ts';

export function registerAgentUpdate(agent: Command): void {
  addAgentOptions(
    agent
      .command('update <agent>')
      .description(
        'change an agent; a policy or fleet change makes a new version (`--bind build=dev` moves a binding to the current revision)',
      ),
    { update: true },
  ).action(async (idOrName: string, options: AgentOptions, command: Command) => {
    const ctx = contextFrom(command);
    const current = await ctx.client.agents.resolve(idOrName);
    const body: UpdateAgentBody = {};
    const displayName = clearable(options.displayName);
    const description = clearable(options.description);
    if (displayName !== undefined && displayName !== current.displayName) body.displayName = displayName;
    if (description !== undefined && description !== current.description) body.description = description;
    const changes = await policyChangesFrom(ctx.client, options);
    const asked = hasPolicyChanges(changes) || options.fleet !== undefined || displayName !== undefined || description !== undefined;
    if (!asked)
      throw new UsageError(
        'nothing to change: pass --mode, --bind, --unbind, --default, --durability-of, --fleet/--no-fleet, --display-name or --description',
      );
    if (hasPolicyChanges(changes)) {
      const policy = applyPolicyChanges(current.currentVersion.sandboxPolicy, changes);
      if (!samePolicy(current.currentVersion.sandboxPolicy, policy)) body.sandboxPolicy = policy;
    }
    const fleet = current.currentVersion.capabilities.includes('sandbox_fleet');
    if (options.fleet !== undefined && options.fleet !== fleet) {
      const others = current.currentVersion.capabilities.filter((c) => c !== 'sandbox_fleet');
      body.capabilities = options.fleet ? [...others, 'sandbox_fleet'] : others;
    }
    if (Object.keys(body).length === 0) {
      ctx.print(current, () => `${current.name} already says that: nothing changed (version ${current.currentVersion.number})`);
      return;
    }
    const updated = await ctx.client.agents.update(current.id, body);
    if (ctx.json) return ctx.print(updated, () => '');
    const index = await revisionIndex(
      ctx.client,
      [current, updated].flatMap((a) => Object.values(a.currentVersion.sandboxPolicy.bindings).map((b) => b.environmentRevisionId)),
    );
    ctx.print(updated, () =>
      [`updated agent ${updated.name}`, ...describeAgentChanges(current, updated, index).map((l) => `  ${l}`)].join('\n'),
    );
  });
}
