import {
  type Agent,
  type AgentCapability,
  type AgentVersion,
  type Principal,
  type SandboxPolicy,
  SandcastError,
  sandboxPolicyIssues,
} from '@sandcast/core';
import { isUniqueViolation, type Repositories, type Store } from '@sandcast/db';
import { recordActivity } from './activity.service.ts';

export interface CreateAgentInput {
  name: string;
  displayName?: string | null | undefined;
  description?: string | null | undefined;
  sandboxPolicy: SandboxPolicy;
  capabilities: AgentCapability[];
}

export interface UpdateAgentInput {
  displayName?: string | null | undefined;
  description?: string | null | undefined;
  sandboxPolicy?: SandboxPolicy | undefined;
  capabilities?: AgentCapability[] | undefined;
}

export type AgentsService = ReturnType<typeof createAgentsService>;

/**
 * The agents an agent key may see: those an admin listed in its allowedAgentIds. Admins (and the
 * local operator) see every agent. Anything else reads as absent, never as forbidden.
 */
export async function visibleAgentIds(repos: Repositories, actor: Principal): Promise<Set<string> | 'all'> {
  if (actor.role === 'admin') return 'all';
  if (actor.keyId === null) return new Set();
  return new Set((await repos.apiKeys.get(actor.keyId))?.allowedAgentIds ?? []);
}

/**
 * Agents: named consumers of sandboxes, the mutable head of immutable versions. A policy or
 * capability change makes version N+1; sessions keep the version they started with.
 */
export function createAgentsService({ store }: { store: Store }) {
  const notFound = (id: string) => new SandcastError('not_found', `no agent with id ${id}; GET /api/agents lists them`);

  const requireAgent = async (id: string, actor?: Principal): Promise<Agent> => {
    const agent = await store.repos.agents.get(id);
    if (!agent) throw notFound(id);
    if (actor) {
      const visible = await visibleAgentIds(store.repos, actor);
      if (visible !== 'all' && !visible.has(id)) throw notFound(id);
    }
    return agent;
  };

  /** The policy's own rules, then every binding's revision must exist (a dangling one could never start). */
  const checkPolicy = async (policy: SandboxPolicy): Promise<void> => {
    const issues = sandboxPolicyIssues(policy);
    for (const [name, binding] of Object.entries(policy.bindings)) {
      if (!(await store.repos.environments.getRevision(binding.environmentRevisionId))) {
        issues.push({
          path: `sandboxPolicy.bindings.${name}.environmentRevisionId`,
          message: `binding "${name}" names environment revision ${binding.environmentRevisionId}, which does not exist; GET /api/environments/:id/revisions lists them`,
        });
      }
    }
    const first = issues[0];
    if (first) throw new SandcastError('unprocessable', `the sandbox policy is refused: ${first.path}: ${first.message}`, { issues });
  };

  const duplicateName = (name: string) =>
    new SandcastError('conflict', `an agent named "${name}" already exists; choose another name or edit that one`, { name });

  return {
    async list(actor: Principal, options: { includeArchived?: boolean } = {}): Promise<Agent[]> {
      const visible = await visibleAgentIds(store.repos, actor);
      const agents = await store.repos.agents.list(options);
      return visible === 'all' ? agents : agents.filter((a) => visible.has(a.id));
    },

    get: (id: string, actor: Principal): Promise<Agent> => requireAgent(id, actor),

    async create(input: CreateAgentInput, actor: Principal): Promise<Agent> {
      await checkPolicy(input.sandboxPolicy);
      try {
        return await store.transaction(async (repos) => {
          const agent = await repos.agents.insert({
            name: input.name,
            displayName: input.displayName ?? null,
            description: input.description ?? null,
            sandboxPolicy: input.sandboxPolicy,
            capabilities: input.capabilities,
          });
          await recordActivity(repos, {
            action: 'agent.created',
            actor,
            subjectType: 'agent',
            subjectId: agent.id,
            details: { name: agent.name, version: 1, sandboxPolicy: agent.currentVersion.sandboxPolicy, capabilities: input.capabilities },
          });
          return agent;
        });
      } catch (error) {
        if (isUniqueViolation(error, 'agents_name_key')) throw duplicateName(input.name);
        throw error;
      }
    },

    async update(id: string, input: UpdateAgentInput, actor: Principal): Promise<Agent> {
      const current = await requireAgent(id);
      if (current.archivedAt !== null) {
        throw new SandcastError('conflict', `agent ${current.name} is archived; archived agents cannot be edited`, {
          archivedAt: current.archivedAt,
        });
      }
      if (input.sandboxPolicy) await checkPolicy(input.sandboxPolicy);
      const raced = () =>
        new SandcastError('conflict', 'the agent changed while this edit was being made; reload it and apply the edit again');
      try {
        return await store.transaction(async (repos) => {
          const updated = await repos.agents.update(id, { ...input, expectedVersionId: current.currentVersion.id });
          if (!updated) throw raced();
          const changed = Object.keys(input).filter((k) => input[k as keyof UpdateAgentInput] !== undefined);
          await recordActivity(repos, {
            action: 'agent.updated',
            actor,
            subjectType: 'agent',
            subjectId: id,
            details: {
              changed,
              version: updated.agent.currentVersion.number,
              newVersion: updated.newVersion,
              sandboxPolicy: updated.agent.currentVersion.sandboxPolicy,
            },
          });
          return updated.agent;
        });
      } catch (error) {
        if (isUniqueViolation(error, 'agent_versions_number_key')) throw raced();
        throw error;
      }
    },

    /** Archives: it starts no sessions any more; its versions and sessions stay. */
    async archive(id: string, actor: Principal): Promise<Agent> {
      const current = await requireAgent(id);
      if (current.archivedAt !== null) throw new SandcastError('conflict', `agent ${current.name} is already archived`);
      return store.transaction(async (repos) => {
        const archived = await repos.agents.archive(id, new Date());
        if (!archived) throw new SandcastError('conflict', `agent ${current.name} is already archived`);
        await recordActivity(repos, {
          action: 'agent.archived',
          actor,
          subjectType: 'agent',
          subjectId: id,
          details: { name: current.name },
        });
        return archived;
      });
    },

    async versions(id: string): Promise<AgentVersion[]> {
      await requireAgent(id);
      return store.repos.agents.versions(id);
    },
  };
}
