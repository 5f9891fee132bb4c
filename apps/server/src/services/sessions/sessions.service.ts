import {
  type ApiKeyRole,
  type EnvironmentPolicy,
  type Principal,
  resolveSandboxPolicy,
  type Sandbox,
  SandcastError,
  type Session,
  type SessionSandboxRequest,
} from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { FastifyBaseLogger } from 'fastify';
import type { BridgeTarget } from '../../bridge/bridge.service.ts';
import { type Clock, systemClock } from '../../clock.ts';
import type { EgressHooks } from '../../egress/egress.service.ts';
import type { ProviderRegistry } from '../../providers/provider-registry.ts';
import { recordActivity } from '../activity.service.ts';
import { visibleAgentIds } from '../agents.service.ts';
import type { SandboxesService } from '../sandboxes.service.ts';
import type { SecretBox } from '../secrets.ts';
import type { SettingsService } from '../settings.service.ts';
import { planPrimarySandbox } from './pin-plan.ts';

export type SessionsService = ReturnType<typeof createSessionsService>;

/**
 * Sessions: one agent run each. Starting one resolves the agent's sandbox policy once and pins
 * the result (agent version, exact environment revision, overrides, image) into its primary
 * sandbox, which is provisioned eagerly. Agent keys see only the sessions they started; anything
 * else reads as absent.
 */
export function createSessionsService(deps: {
  store: Store;
  providers: ProviderRegistry;
  secrets: SecretBox;
  settings: SettingsService;
  policy: () => Promise<EnvironmentPolicy>;
  sandboxes: SandboxesService;
  log: FastifyBaseLogger;
  clock?: Clock | undefined;
  /** Browser terminals attached to sandboxes, closed when their session ends. */
  terminals?: { endSandbox(sandboxId: string): void } | undefined;
  /** The host bridge, started in a session's primary sandbox once it runs (src/bridge). */
  bridges?: { start(target: BridgeTarget): Promise<unknown> } | undefined;
  /** Gives a new sandbox the egress proxy its containment calls for, before bootstrap runs. */
  egress?: EgressHooks | undefined;
}) {
  const { store } = deps;
  const clock = deps.clock ?? systemClock;

  const notFound = (id: string) => new SandcastError('not_found', `no session with id ${id}; GET /api/sessions lists yours`);

  /** The session, if the caller may see it: admins see all, an agent key only the ones it started. */
  const requireSession = async (id: string, actor: Principal): Promise<Session> => {
    const session = await store.repos.sessions.get(id);
    if (!session) throw notFound(id);
    if (actor.role !== 'admin' && (actor.keyId === null || session.createdByKeyId !== actor.keyId)) throw notFound(id);
    return session;
  };

  const requireActive = async (id: string, actor: Principal): Promise<Session> => {
    const session = await requireSession(id, actor);
    if (session.status === 'ended') {
      throw new SandcastError('conflict', `session ${id} has ended; its tools are closed — start a new session`, { status: 'ended' });
    }
    return session;
  };

  const primarySandboxOf = async (session: Session): Promise<Sandbox> => {
    const sandbox = session.primarySandboxId ? await store.repos.sandboxes.get(session.primarySandboxId) : null;
    if (!sandbox) {
      throw new SandcastError('not_found', `session ${session.id} has no primary sandbox (its agent's sandbox policy is "none")`);
    }
    return sandbox;
  };

  return {
    requireSession,

    async list(actor: Principal): Promise<Session[]> {
      if (actor.role === 'admin') return store.repos.sessions.list();
      if (actor.keyId === null) return [];
      return store.repos.sessions.list({ createdByKeyId: actor.keyId });
    },

    async start(input: { agentId: string; sandbox?: SessionSandboxRequest }, actor: Principal): Promise<Session> {
      const agent = await store.repos.agents.get(input.agentId);
      const visible = await visibleAgentIds(store.repos, actor);
      // An agent a key may not use reads as absent: its existence is not the key's business.
      if (!agent || (visible !== 'all' && !visible.has(agent.id))) {
        throw new SandcastError('not_found', `no agent with id ${input.agentId} that this key may start sessions for`);
      }
      if (agent.archivedAt !== null) {
        throw new SandcastError('conflict', `agent ${agent.name} is archived; archived agents start no sessions`, {
          archivedAt: agent.archivedAt,
        });
      }
      const version = agent.currentVersion;
      const resolution = resolveSandboxPolicy(version.sandboxPolicy, input.sandbox);
      // Read before the transaction: PGlite has one connection, held by the transaction.
      const settings = await deps.settings.get();
      const policy = await deps.policy();
      const session = await store.transaction(async (repos) => {
        const inserted = await repos.sessions.insert({
          agentId: agent.id,
          agentVersionId: version.id,
          bindingName: resolution.kind === 'none' ? null : resolution.kind === 'inline' ? 'inline' : resolution.name,
          createdByRole: actor.role,
          createdByKeyId: actor.keyId,
        });
        // Planned inside the transaction: a refusal leaves no session behind.
        const plan =
          resolution.kind === 'none'
            ? null
            : await planPrimarySandbox(
                { repos, providers: deps.providers, secrets: deps.secrets, settings, policy },
                resolution,
                inserted.id,
              );
        // A session whose sandbox could not be made is refused whole (a pool claim needs no room; the cold path checks again).
        if (plan && (await repos.warmPools.members(plan.environmentId)).length === 0) await deps.sandboxes.requireRoom(repos, 1);
        await recordActivity(repos, {
          action: 'session.started',
          actor,
          subjectType: 'session',
          subjectId: inserted.id,
          details: {
            agentId: agent.id,
            agentVersion: version.number,
            bindingName: inserted.bindingName,
            environmentRevisionId: plan?.revision.id ?? null,
            imageId: plan?.image?.id ?? null,
            configOverrides: Object.keys(plan?.configOverrides ?? {}),
          },
        });
        return { session: inserted, plan };
      });
      if (!session.plan) return session.session;
      try {
        const sandbox = await deps.sandboxes.provision(session.plan, actor, { primaryOfSession: session.session.id });
        if (deps.bridges && sandbox.status === 'running' && sandbox.providerInstanceId) {
          // In the background: the session's commands wait for it to settle (their env names it).
          const target = { sandboxId: sandbox.id, sessionId: session.session.id, principal: actor, providerId: sandbox.provider };
          void deps.bridges.start({ ...target, instanceId: sandbox.providerInstanceId }).catch((error: unknown) => {
            deps.log.warn({ err: error, sessionId: session.session.id }, 'the sandbox bridge could not start');
          });
        }
      } catch (error) {
        // The sandbox says why it failed; the session exists and can be ended.
        deps.log.warn({ err: error, sessionId: session.session.id }, 'primary sandbox could not be created');
      }
      return (await store.repos.sessions.get(session.session.id))!;
    },

    get: (id: string, actor: Principal) => requireSession(id, actor),

    /**
     * After this server starts: bridge tokens lived in the process that made them, so every active
     * session whose primary sandbox runs gets its bridge again (in the background), for the
     * principal that started the session. Answers how many were started.
     */
    async resumeBridges(): Promise<number> {
      const bridges = deps.bridges;
      if (!bridges) return 0;
      let started = 0;
      for (const session of await store.repos.sessions.list()) {
        if (session.status !== 'active' || !session.primarySandboxId) continue;
        const sandbox = await store.repos.sandboxes.get(session.primarySandboxId);
        if (sandbox?.status !== 'running' || !sandbox.providerInstanceId) continue;
        const principal: Principal = { role: session.createdByRole as ApiKeyRole, keyId: session.createdByKeyId };
        const target = { sandboxId: sandbox.id, sessionId: session.id, principal, providerId: sandbox.provider };
        void bridges.start({ ...target, instanceId: sandbox.providerInstanceId }).catch((error: unknown) => {
          deps.log.warn({ err: error, sessionId: session.id }, 'the sandbox bridge could not start again after a restart');
        });
        started++;
      }
      return started;
    },

    /** Ends the session: its compute is torn down, its records (and the sandbox's) stay. */
    async end(id: string, actor: Principal): Promise<Session> {
      const session = await requireSession(id, actor);
      const ended = await store.transaction(async (repos) => {
        const row = await repos.sessions.end(id, clock.now());
        if (!row) throw new SandcastError('conflict', `session ${id} has already ended`, { status: 'ended' });
        await recordActivity(repos, { action: 'session.ended', actor, subjectType: 'session', subjectId: id, details: {} });
        return row;
      });
      if (session.primarySandboxId) {
        deps.terminals?.endSandbox(session.primarySandboxId);
        const sandbox = await store.repos.sandboxes.get(session.primarySandboxId);
        if (sandbox && sandbox.status !== 'deleted') await deps.sandboxes.delete(sandbox.id, actor);
      }
      // Its resource sandboxes go with it; one that will not is retried by the reconciler and flagged.
      for (const resource of await store.repos.sandboxes.listFleet(id)) {
        deps.terminals?.endSandbox(resource.id);
        await deps.sandboxes.delete(resource.id, actor).catch((err: unknown) => {
          deps.log.warn({ err, sandboxId: resource.id }, 'resource sandbox teardown failed; the reconciler retries');
        });
      }
      return ended;
    },

    /** The primary sandbox as pinned, with the revision number it came from. */
    async sandbox(id: string, actor: Principal) {
      const session = await requireSession(id, actor);
      const sandbox = await primarySandboxOf(session);
      const revision = await store.repos.environments.getRevision(sandbox.environmentRevisionId);
      return { session, sandbox, revisionNumber: revision?.number ?? null, registered: deps.providers.get(sandbox.provider) ?? null };
    },

    /**
     * The running primary sandbox of an active session the caller may use, its last activity
     * recorded: every tool (exec, files, terminal) goes through here. `touch: false` for a tool
     * that goes on to the sandboxes' exec or file operations, which record it themselves in the
     * same statement as their read (ADR 0032).
     */
    async useSandbox(id: string, actor: Principal, options: { touch?: boolean } = {}): Promise<Sandbox> {
      const session = await requireActive(id, actor);
      const sandbox = await primarySandboxOf(session);
      if (options.touch !== false) await store.repos.sandboxes.touch(sandbox.id, clock.now());
      return sandbox;
    },
  };
}
