import type { ExecBody, ManageFleetSandboxBody } from '@sandcast/contracts';
import {
  type EnvironmentPolicy,
  FLEET_ID_PREFIX,
  FLEET_NOT_OURS_MESSAGE,
  fleetReservationOf,
  isSandcastError,
  type PolicyResolution,
  type Principal,
  type Sandbox,
  SandcastError,
  type Session,
} from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { FastifyBaseLogger } from 'fastify';
import type { CheckpointsService } from '../../checkpoints/checkpoints.service.ts';
import type { ProviderRegistry } from '../../providers/provider-registry.ts';
import type { SandboxesService } from '../sandboxes.service.ts';
import type { SecretBox } from '../secrets.ts';
import type { SettingsService } from '../settings.service.ts';
import { planPrimarySandbox } from './pin-plan.ts';
import { provisionSandbox } from './primary-sandbox.ts';
import type { SessionsService } from './sessions.service.ts';

export type FleetService = ReturnType<typeof createFleetService>;

/** The refusal for any id this session did not create: the same words whether it exists or not. */
const notOurs = (logicalId: string) => new SandcastError('not_found', FLEET_NOT_OURS_MESSAGE, { sandboxId: logicalId });

/** Logical ids: short, random, and scoped to the session by the unique index beside them. */
const newLogicalId = () => `${FLEET_ID_PREFIX}_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;

/** A resource sandbox as the tools answer it: the record and the revision number it pins. */
export interface FleetView {
  sandbox: Sandbox;
  revisionNumber: number | null;
}

/**
 * Resource sandboxes ("the fleet") of sessions whose agent has the `sandbox_fleet` capability:
 * created from a binding of the agent's pinned policy, addressed by a logical id scoped to the
 * session (`rsb_…`), limited per session by the `fleet` settings. They are ordinary sandboxes
 * (they converge, idle and end with their session); nothing here touches the primary sandbox.
 */
export function createFleetService(deps: {
  store: Store;
  providers: ProviderRegistry;
  secrets: SecretBox;
  settings: SettingsService;
  policy: () => Promise<EnvironmentPolicy>;
  sessions: SessionsService;
  sandboxes: SandboxesService;
  log: FastifyBaseLogger;
  checkpoints: CheckpointsService;
}) {
  const { store, sessions, sandboxes, checkpoints } = deps;

  /** The session, active, and its agent version allowing the fleet; 404 for another key's session. */
  const requireFleetSession = async (sessionId: string, actor: Principal): Promise<Session> => {
    const session = await sessions.requireSession(sessionId, actor);
    const version = await store.repos.agents.getVersion(session.agentVersionId);
    if (!version?.capabilities.includes('sandbox_fleet')) {
      throw new SandcastError(
        'forbidden',
        `session ${session.id}'s agent does not have the sandbox_fleet capability; an admin adds it to the agent (a new version) and a new session gets it`,
        { reason: 'no_fleet_capability' },
      );
    }
    if (session.status === 'ended') {
      throw new SandcastError('conflict', `session ${session.id} has ended; its tools are closed — start a new session`, {
        status: 'ended',
      });
    }
    return session;
  };

  const requireResource = async (session: Session, logicalId: string): Promise<Sandbox> => {
    const sandbox = await store.repos.sandboxes.getFleet(session.id, logicalId);
    if (!sandbox || sandbox.status === 'deleted') throw notOurs(logicalId);
    return sandbox;
  };

  /** Runs a sandboxes-service call; its errors name the logical id, never the internal one. */
  const speaking = async <T>(sandbox: Sandbox, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (isSandcastError(error) && sandbox.logicalId) {
        throw new SandcastError(error.code, error.message.replaceAll(sandbox.id, sandbox.logicalId), error.details);
      }
      throw error;
    }
  };

  const view = async (sandbox: Sandbox): Promise<FleetView> => ({
    sandbox,
    revisionNumber: (await store.repos.environments.getRevision(sandbox.environmentRevisionId))?.number ?? null,
  });

  /** `use`: a binding's name, else an environment's name one of the bindings pins a revision of. */
  const resolveUse = async (session: Session, use: string | undefined): Promise<Exclude<PolicyResolution, { kind: 'none' }>> => {
    const version = (await store.repos.agents.getVersion(session.agentVersionId))!;
    const { bindings } = version.sandboxPolicy;
    const names = Object.keys(bindings);
    if (names.length === 0) {
      throw new SandcastError(
        'unprocessable',
        "this agent's sandbox policy binds no environment; resource sandboxes come from its bindings",
        {
          reason: 'no_bindings',
        },
      );
    }
    const name = use ?? version.sandboxPolicy.default ?? names[0]!;
    if (Object.hasOwn(bindings, name)) return { kind: 'binding', name, binding: bindings[name]! };
    const environment = await store.repos.environments.getByName(name);
    if (environment) {
      for (const candidate of names) {
        const revision = await store.repos.environments.getRevision(bindings[candidate]!.environmentRevisionId);
        if (revision?.environmentId === environment.id) return { kind: 'binding', name: candidate, binding: bindings[candidate]! };
      }
    }
    throw new SandcastError(
      'unprocessable',
      `"${name}" is neither a binding of this agent nor an environment it binds; it offers ${names.join(', ')}`,
      {
        reason: 'unknown_binding',
      },
    );
  };

  /** Refuses a creation that would take the session past a fleet limit, naming the limit. */
  const checkLimits = (siblings: Sandbox[], limits: Awaited<ReturnType<SettingsService['get']>>['fleet']) => {
    const cpu = siblings.reduce((sum, s) => sum + (s.reservation?.cpu ?? 0), 0);
    const memoryMb = siblings.reduce((sum, s) => sum + (s.reservation?.memoryMb ?? 0), 0);
    const over = (limit: string, value: number, max: number, unit: string) =>
      new SandcastError(
        'conflict',
        `this session would have ${value}${unit} of resource sandboxes, over the limit fleet.${limit} = ${max}${unit}; delete one (sandbox_manage delete) or ask an admin to raise the limit`,
        { reason: 'fleet_limit', limit: `fleet.${limit}`, max, value },
      );
    if (siblings.length > limits.maxSandboxesPerSession)
      throw over('maxSandboxesPerSession', siblings.length, limits.maxSandboxesPerSession, '');
    if (cpu > limits.maxCpusPerSession) throw over('maxCpusPerSession', cpu, limits.maxCpusPerSession, ' CPU');
    if (memoryMb > limits.maxMemoryMbPerSession) throw over('maxMemoryMbPerSession', memoryMb, limits.maxMemoryMbPerSession, ' MiB');
  };

  return {
    /** What the tools table asks before listing or running a fleet tool. */
    requireFleetSession,

    async create(sessionId: string, input: { use?: string | undefined }, actor: Principal): Promise<FleetView> {
      const session = await requireFleetSession(sessionId, actor);
      const resolution = await resolveUse(session, input.use);
      // Read before the transaction: PGlite has one connection, held by the transaction.
      const settings = await deps.settings.get();
      const plan = await planPrimarySandbox(
        { repos: store.repos, providers: deps.providers, secrets: deps.secrets, settings, policy: await deps.policy() },
        resolution,
        session.id,
      );
      const logicalId = newLogicalId();
      const sandbox = await provisionSandbox(deps, { ...plan, fleet: { logicalId, reservation: fleetReservationOf(plan.config) } }, actor, {
        countAsUse: true,
        activity: true,
        // In the insert's transaction: the session's row first (serialising creations), then the limits.
        onInserted: async (repos) => {
          if (!(await repos.sessions.claimFleetSlot(session.id))) {
            throw new SandcastError('conflict', `session ${session.id} has ended; its tools are closed — start a new session`, {
              status: 'ended',
            });
          }
          checkLimits(await repos.sandboxes.listFleet(session.id), settings.fleet);
        },
      }).catch(async (error: unknown) => {
        // A provider that could not create the compute leaves a failed record: answer it as a failed sandbox.
        if (isSandcastError(error)) throw error;
        deps.log.warn({ err: error, sessionId: session.id }, 'resource sandbox could not be created');
        const failed = await store.repos.sandboxes.getFleet(session.id, logicalId);
        if (!failed) throw error;
        return failed;
      });
      return view(sandbox);
    },

    async list(sessionId: string, actor: Principal): Promise<FleetView[]> {
      const session = await requireFleetSession(sessionId, actor);
      return Promise.all((await store.repos.sandboxes.listFleet(session.id)).map(view));
    },

    async inspect(sessionId: string, logicalId: string, actor: Principal): Promise<FleetView> {
      const sandbox = await requireResource(await requireFleetSession(sessionId, actor), logicalId);
      return view(await speaking(sandbox, () => sandboxes.get(sandbox.id)));
    },

    /** A command; a checkpointed sandbox's workspace is checkpointed before the answer. */
    async exec(sessionId: string, logicalId: string, body: ExecBody, actor: Principal) {
      const sandbox = await requireResource(await requireFleetSession(sessionId, actor), logicalId);
      const result = await speaking(sandbox, () => sandboxes.exec(sandbox.id, body, actor));
      await speaking(sandbox, () => checkpoints.afterMutation(sandbox.id));
      return result;
    },

    async readFile(sessionId: string, logicalId: string, path: string, actor: Principal) {
      const sandbox = await requireResource(await requireFleetSession(sessionId, actor), logicalId);
      return speaking(sandbox, () => sandboxes.readFile(sandbox.id, path, actor));
    },

    async writeFile(sessionId: string, logicalId: string, path: string, data: Buffer, mode: number | undefined, actor: Principal) {
      const sandbox = await requireResource(await requireFleetSession(sessionId, actor), logicalId);
      const { recovered } = await speaking(sandbox, () => sandboxes.writeFile(sandbox.id, path, data, mode, actor));
      await speaking(sandbox, () => checkpoints.afterMutation(sandbox.id));
      return { path, sizeBytes: data.length, ...(recovered ? { recovered } : {}) };
    },

    /** `sandbox_checkpoint`: a manual checkpoint of a checkpointed sandbox (recovered first if its compute is gone). */
    async checkpoint(sessionId: string, logicalId: string, actor: Principal) {
      const sandbox = await requireResource(await requireFleetSession(sessionId, actor), logicalId);
      requireCheckpointed(sandbox);
      const { value, recovered } = await speaking(sandbox, () =>
        sandboxes.withCompute(sandbox.id, actor, (current) => checkpoints.take(current, 'manual', actor)),
      );
      if (!value) throw new SandcastError('conflict', `sandbox ${logicalId} got new compute while the checkpoint was taken; try again`);
      const current = (await store.repos.sandboxes.get(sandbox.id)) ?? sandbox;
      return { checkpoint: value, currentCheckpointId: current.currentCheckpointId, ...(recovered ? { recovered } : {}) };
    },

    async manage(sessionId: string, logicalId: string, body: ManageFleetSandboxBody, actor: Principal): Promise<FleetView> {
      const sandbox = await requireResource(await requireFleetSession(sessionId, actor), logicalId);
      switch (body.action) {
        case 'stop':
          return view(await speaking(sandbox, () => sandboxes.stop(sandbox.id, actor)));
        case 'start':
          return view(await speaking(sandbox, () => sandboxes.start(sandbox.id, actor)));
        case 'delete':
          return view(await speaking(sandbox, () => sandboxes.delete(sandbox.id, actor)));
        case 'restore': {
          requireCheckpointed(sandbox);
          const checkpointId = body.checkpointId ?? sandbox.currentCheckpointId;
          if (!checkpointId) {
            throw new SandcastError('conflict', `sandbox ${logicalId} has no checkpoint yet; take one with sandbox_checkpoint first`, {
              reason: 'no_checkpoint',
            });
          }
          // Refused before any compute is touched: another sandbox's checkpoint does not exist here.
          await speaking(sandbox, () => checkpoints.requireCheckpoint(sandbox, checkpointId));
          await speaking(sandbox, () =>
            sandboxes.withCompute(sandbox.id, actor, (current) => checkpoints.restore(current, checkpointId, actor)),
          );
          return view((await store.repos.sandboxes.get(sandbox.id))!);
        }
      }
    },
  };
}

/** Checkpoints are kept for sandboxes of durability `checkpointed` only. */
function requireCheckpointed(sandbox: Sandbox): void {
  if (sandbox.spec.durability !== 'checkpointed') {
    throw new SandcastError(
      'conflict',
      `sandbox ${sandbox.logicalId} has durability "${sandbox.spec.durability}"; checkpoints need durability "checkpointed" — create it from a binding with durability checkpointed`,
      { reason: 'not_checkpointed', durability: sandbox.spec.durability },
    );
  }
}
