import type { ConnectionPayload, ExecBody, SetupChanges } from '@sandcast/contracts';
import {
  InvalidTransition,
  isRunningSetup,
  likelySecrets,
  type Principal,
  type RunningSetupSession,
  SandcastError,
  SETUP_SESSION_LABELS,
  type SetupSession,
  type SetupSessionStatus,
  setupSessionMachine,
} from '@sandcast/core';
import { isUniqueViolation, type Store } from '@sandcast/db';
import type { ExecProcess, ExecResult, SetupLease } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../../clock.ts';
import type { EgressHooks } from '../../egress/egress.service.ts';
import type { ProviderRegistry } from '../../providers/provider-registry.ts';
import { withTimeout } from '../../with-timeout.ts';
import { recordActivity } from '../activity.service.ts';
import { bootSourceFor } from '../boot-source.ts';
import { type EnvironmentContextLoader, requireBootable, requireRegisteredProvider } from '../environment-context.ts';
import { CAPTURE_UNAVAILABLE_MESSAGE, UNSUPPORTED_SETUP_MESSAGE } from './capability.ts';
import { type ConnectionBroker, directConnectionBroker, summarizeConnection } from './connection-broker.ts';
import { scanChangedContent } from './content-secret-scan.ts';
import { type CaptureProgress, captureAndPromote } from './setup-capture.ts';
import type { SetupEndReason, SetupEvents } from './setup-events.ts';
import { templateRefOf } from './template-ref.ts';

/** A teardown that takes longer is left to the reconciler, so a wedged backend cannot hang a request. */
const TEARDOWN_TIMEOUT_MS = 30_000;

/** At most this many changed paths are listed; the rest is summarised as truncated. */
const MAX_LISTED_CHANGES = 2000;

export interface SetupSessionsDeps {
  store: Store;
  providers: ProviderRegistry;
  loadEnvironment: EnvironmentContextLoader;
  events: SetupEvents;
  log: FastifyBaseLogger;
  clock?: Clock | undefined;
  broker?: ConnectionBroker | undefined;
  /** Output an exec JSON answer keeps per stream; default the provider SDK's (4 MiB). */
  execOutputMaxBytes?: number | undefined;
  /** Closes the ports the session's sandbox serves as URLs, and cuts their connections. */
  closePorts?: ((sessionId: string) => Promise<void>) | undefined;
  /** Gives the setup sandbox the egress proxy its environment's containment calls for. */
  egress?: EgressHooks | undefined;
  /** Told after a change to what an environment boots from commits (boot-target caches drop it). */
  bootSourceChanged?: ((environmentId: string) => void) | undefined;
}

export type SetupSessionsService = ReturnType<typeof createSetupSessionsService>;

/**
 * Setup sessions: start a throwaway sandbox, let the operator prepare it, capture it as the
 * environment's active image (Finished) or throw it away (Cancel, expiry). Status changes are
 * compare-and-set; the database allows one active session per environment.
 */
export function createSetupSessionsService(deps: SetupSessionsDeps) {
  const clock = deps.clock ?? systemClock;
  const broker = deps.broker ?? directConnectionBroker;
  const { store, events, log } = deps;
  /** Connection payloads handed out by this process (the secret part is never stored). */
  const payloads = new Map<string, ConnectionPayload>();
  /** Capture progress of sessions this process is capturing. */
  const progress = new Map<string, CaptureProgress>();

  const providerOf = (session: SetupSession) => requireRegisteredProvider(deps.providers, session.provider).provider;

  const wrongStatus = (session: SetupSession, action: string) =>
    new SandcastError('conflict', `the setup session is ${session.status} ("${SETUP_SESSION_LABELS[session.status]}"); ${action}`, {
      status: session.status,
    });

  /** Its URLs stop answering and their connections end: from the moment the session stops running. */
  const closePorts = async (sessionId: string) => {
    try {
      await deps.closePorts?.(sessionId);
    } catch (error) {
      // The forwarder checks the session's status on every request, so nothing answers anyway.
      log.warn({ err: error, sessionId }, "closing a setup session's ports failed");
    }
  };

  /** Releases the setup sandbox. Best effort: the reconciler retries what fails here. */
  const teardown = async (session: SetupSession) => {
    payloads.delete(session.id);
    await closePorts(session.id);
    if (!session.providerLeaseId) return;
    await deps.egress?.detach(session.providerLeaseId);
    try {
      await withTimeout(providerOf(session).cancelInteractiveSetup(session.providerLeaseId), TEARDOWN_TIMEOUT_MS, 'setup sandbox teardown');
    } catch (error) {
      log.warn({ err: error, sessionId: session.id }, 'setup sandbox teardown failed; the reconciler will retry');
    }
  };

  /** Ends an active session (cancel, expiry, loss) and announces it. */
  const end = async (
    session: SetupSession,
    to: Extract<SetupSessionStatus, 'cancelled' | 'timed_out' | 'failed'>,
    detail: {
      actor: Principal;
      action: string;
      reason: SetupEndReason;
      failureReason?: string | undefined;
      activityDetails?: Record<string, unknown>;
    },
  ): Promise<SetupSession | null> => {
    const ended = await store.transaction(async (repos) => {
      const next = await repos.setupSessions.transition(session.id, to, { finished: true, failureReason: detail.failureReason });
      if (next) {
        await recordActivity(repos, {
          action: detail.action,
          actor: detail.actor,
          subjectType: 'setup_session',
          subjectId: session.id,
          details: { environmentId: session.environmentId, ...detail.activityDetails },
        });
      }
      return next;
    });
    if (ended) {
      await teardown(ended);
      events.ended(ended.id, detail.reason);
    }
    return ended;
  };

  const SYSTEM: Principal = { role: 'admin', keyId: null };

  /** Applies expiry lazily: a session read after its expiry is timed out first (if it still can be). */
  const refresh = async (session: SetupSession): Promise<SetupSession> => {
    if (!setupSessionMachine.can(session.status, 'timed_out')) return session;
    if (new Date(session.expiresAt) > clock.now()) return session;
    const expired = await end(session, 'timed_out', {
      actor: SYSTEM,
      action: 'environment.custom_image_setup.expired',
      reason: 'expired',
    }).catch((error: unknown) => {
      // Another request moved it on (a Finished just began capturing): read what it is now.
      if (error instanceof InvalidTransition) return null;
      throw error;
    });
    return expired ?? (await store.repos.setupSessions.get(session.id)) ?? session;
  };

  const requireSession = async (sessionId: string): Promise<SetupSession> => {
    const session = await store.repos.setupSessions.get(sessionId);
    if (!session) throw new SandcastError('not_found', `no setup session with id ${sessionId}`);
    return refresh(session);
  };

  const requireRunning = async (sessionId: string, action: string): Promise<RunningSetupSession> => {
    const session = await requireSession(sessionId);
    if (!isRunningSetup(session)) throw wrongStatus(session, action);
    return session;
  };

  const connectionPayload = (session: SetupSession): ConnectionPayload | null => {
    if (!isRunningSetup(session)) return null;
    return payloads.get(session.id) ?? (session.connectionSummary.type === 'pty' ? { type: 'pty', expiresAt: session.expiresAt } : null);
  };

  return {
    events,
    requireSession,
    refresh,
    connectionPayload,
    progressOf: (sessionId: string) => progress.get(sessionId) ?? null,

    async start(environmentId: string, input: { templateId?: string | undefined; ttlSeconds: number }, actor: Principal) {
      const ctx = await deps.loadEnvironment(environmentId);
      requireBootable(ctx);
      const provider = ctx.registered.provider;
      if (!provider.capabilities.interactiveSetup) {
        throw new SandcastError('capability_unsupported', UNSUPPORTED_SETUP_MESSAGE, { provider: provider.id });
      }
      const active = await store.repos.templates.active(environmentId);
      let source = null;
      if (input.templateId !== undefined) {
        if (!active || active.id !== input.templateId) {
          throw new SandcastError(
            'unprocessable',
            `templateId ${input.templateId} is not this environment's active image${active ? ` (that is ${active.id})` : ' (it has none)'}; a setup can only be seeded from the active image`,
          );
        }
        source = active;
      } else if (active && active.linkedFingerprint === ctx.fingerprint) {
        source = active; // Refresh: build on what runs boot from today.
      }
      const expiresAt = new Date(clock.now().getTime() + input.ttlSeconds * 1000);
      let session: SetupSession;
      try {
        session = await store.transaction(async (repos) => {
          const inserted = await repos.setupSessions.insert({
            environmentId,
            environmentRevisionId: ctx.environment.currentRevision.id,
            provider: provider.id,
            sourceTemplateId: source?.id ?? null,
            expiresAt,
            createdByKeyId: actor.keyId,
          });
          await recordActivity(repos, {
            action: 'environment.custom_image_setup.started',
            actor,
            subjectType: 'setup_session',
            subjectId: inserted.id,
            details: { environmentId, sourceTemplateId: source?.id ?? null, ttlSeconds: input.ttlSeconds },
          });
          return inserted;
        });
      } catch (error) {
        if (!isUniqueViolation(error, 'setup_sessions_one_active_per_environment')) throw error;
        const current = await store.repos.setupSessions.activeForEnvironment(environmentId);
        throw new SandcastError(
          'conflict',
          `a setup session is already ${current ? `${current.status} (${current.id})` : 'active'} for this environment; finish or cancel it first`,
          current ? { sessionId: current.id, status: current.status } : undefined,
        );
      }

      const failStart = (started: SetupSession, error: unknown) =>
        end(started, 'failed', {
          actor,
          action: 'environment.custom_image_setup.failed',
          reason: 'setup_finished',
          failureReason: `the provider could not start the setup sandbox: ${(error as Error).message}`,
        }).catch((err: unknown) => {
          // Cancelled or expired while the provider tried: the session already ended.
          if (!(err instanceof InvalidTransition)) throw err;
        });
      let lease: SetupLease;
      try {
        lease = await provider.startInteractiveSetup({
          setupSessionId: session.id,
          environmentId,
          config: ctx.environment.config,
          source: source ? templateRefOf(source) : null,
          ttlSeconds: input.ttlSeconds,
        });
      } catch (error) {
        await failStart(session, error);
        throw error;
      }
      try {
        // The operator installs tools through it: the environment's containment, as sandboxes get it.
        await deps.egress?.attach({ kind: 'setup', id: session.id }, provider, lease.leaseId, ctx.environment.spec.containment);
      } catch (error) {
        await provider
          .cancelInteractiveSetup(lease.leaseId)
          .catch((err: unknown) => log.warn({ err }, 'teardown after a failed start failed'));
        await failStart(session, error);
        throw error;
      }
      const running = await store.repos.setupSessions
        .transition(session.id, 'waiting_for_user', {
          providerLeaseId: lease.leaseId,
          connectionSummary: summarizeConnection(lease.connection),
        })
        .catch((error: unknown) => {
          if (error instanceof InvalidTransition) return null;
          throw error;
        });
      if (!running) {
        // Cancelled or expired while the provider was starting it: give the sandbox back.
        await provider.cancelInteractiveSetup(lease.leaseId).catch((err: unknown) => log.warn({ err }, 'teardown after a race failed'));
        const now = await requireSession(session.id);
        throw wrongStatus(now, 'it ended while the sandbox was starting');
      }
      const payload = await broker.payloadFor(running, lease.connection);
      payloads.set(running.id, payload);
      return { session: running, connectionPayload: payload };
    },

    async exec(sessionId: string, body: ExecBody): Promise<ExecResult> {
      const session = await requireRunning(sessionId, 'commands run only while the setup is running');
      return providerOf(session).exec(session.providerLeaseId, { ...body, maxOutputBytes: deps.execOutputMaxBytes });
    },

    /** The same command, its output handed over as it is produced (no cap: the reader paces it). */
    async execStream(sessionId: string, body: ExecBody): Promise<ExecProcess> {
      const session = await requireRunning(sessionId, 'commands run only while the setup is running');
      return providerOf(session).execStream(session.providerLeaseId, body);
    },

    async changes(sessionId: string): Promise<SetupChanges> {
      const session = await requireRunning(sessionId, 'changes are listed only while the setup is running');
      const provider = providerOf(session);
      if (!provider.capabilities.changeTracking) {
        throw new SandcastError('capability_unsupported', `the ${provider.id} provider cannot list what a setup changed`);
      }
      const all = await provider.listChanges(session.providerLeaseId);
      const totalBytes = all.reduce((sum, c) => sum + (c.kind !== 'deleted' && c.type === 'file' ? (c.sizeBytes ?? 0) : 0), 0);
      const scanned = await scanChangedContent(provider, session.providerLeaseId, all);
      return {
        changes: all.slice(0, MAX_LISTED_CHANGES),
        warnings: [...likelySecrets(all), ...scanned.warnings],
        totalBytes,
        truncated: all.length > MAX_LISTED_CHANGES,
        contentScan: { filesScanned: scanned.filesScanned, bytesScanned: scanned.bytesScanned, filesSkipped: scanned.filesSkipped },
      };
    },

    async finish(sessionId: string, input: { metadata?: Record<string, unknown> | undefined }, actor: Principal) {
      const session = await requireSession(sessionId);
      setupSessionMachine.transition(session.status, 'capturing', 'only a running setup can be finished');
      if (!isRunningSetup(session)) throw wrongStatus(session, 'its setup sandbox is not up yet');
      const provider = providerOf(session);
      if (!provider.capabilities.templateCapture) throw new SandcastError('capability_unsupported', CAPTURE_UNAVAILABLE_MESSAGE);
      const revision = await store.repos.environments.getRevision(session.environmentRevisionId);
      if (!revision) throw new SandcastError('not_found', 'the environment revision this setup started from no longer exists');
      const bootSource = bootSourceFor(requireRegisteredProvider(deps.providers, session.provider), revision.provider, revision.config);

      const capturing = await store.repos.setupSessions.transition(sessionId, 'capturing', {}, { unexpiredAt: clock.now() });
      if (!capturing) throw wrongStatus(await requireSession(sessionId), 'only a running, unexpired setup can be finished');
      // Nothing reaches the sandbox while it is captured, and it reaches nothing.
      await closePorts(sessionId);
      if (session.providerLeaseId) await deps.egress?.detach(session.providerLeaseId);
      // Every outcome closes the same way: the setup sandbox goes, its terminals are told.
      const close = async (ended: SetupSession) => {
        await teardown({ ...ended, providerLeaseId: ended.providerLeaseId ?? session.providerLeaseId });
        events.ended(sessionId, 'setup_finished');
      };
      return captureAndPromote(
        { store, log, clock, progress, close, bootSourceChanged: deps.bootSourceChanged },
        { session: { ...capturing, providerLeaseId: session.providerLeaseId }, provider, bootSource, metadata: input.metadata, actor },
      );
    },

    async cancel(sessionId: string, input: { reason?: string | undefined }, actor: Principal): Promise<SetupSession> {
      const session = await requireSession(sessionId);
      setupSessionMachine.transition(
        session.status,
        'cancelled',
        session.status === 'capturing' ? 'a capture cannot be interrupted; wait for it to finish' : 'it has already ended',
      );
      const cancelled = await end(session, 'cancelled', {
        actor,
        action: 'environment.custom_image_setup.cancelled',
        reason: 'setup_cancelled',
        activityDetails: { reason: input.reason ?? null },
      });
      if (!cancelled) throw wrongStatus(await requireSession(sessionId), 'it changed while cancelling');
      return cancelled;
    },

    /** Times out every session past its expiry (the periodic sweep; reads do it lazily too). */
    async sweepExpired(): Promise<number> {
      const expired = await store.repos.setupSessions.listActive({ expiredBefore: clock.now() });
      let count = 0;
      for (const session of expired) if ((await refresh(session)).status === 'timed_out') count++;
      return count;
    },

    /** After a restart: fails every session a crash interrupted (see `recoverOne`). */
    async recoverAfterRestart(): Promise<void> {
      for (const session of await store.repos.setupSessions.listActive()) {
        await recoverOne(session).catch((err: unknown) => log.warn({ err, sessionId: session.id }, 'recovering a setup session failed'));
      }
    },
  };

  /**
   * After a restart: a session caught in `starting` or `capturing` by a crash is failed (the
   * active image was never touched), and a running one whose sandbox is gone is failed too.
   */
  async function recoverOne(session: SetupSession): Promise<void> {
    if (session.status === 'waiting_for_user') {
      const lease = session.providerLeaseId;
      const registered = deps.providers.get(session.provider);
      const alive =
        lease && registered
          ? (await registered.provider.getInteractiveSetup(lease).catch(() => ({ status: 'missing' }))).status !== 'missing'
          : false;
      if (alive && lease && registered) {
        // Its egress proxy went with the old server: the environment's containment again.
        const revision = await store.repos.environments.getRevision(session.environmentRevisionId);
        if (revision) await deps.egress?.attach({ kind: 'setup', id: session.id }, registered.provider, lease, revision.spec.containment);
        return;
      }
    }
    const failureReason =
      session.status === 'waiting_for_user'
        ? 'the setup sandbox was lost while the server was down'
        : session.status === 'capturing'
          ? 'the server stopped during the capture; the previous image is still active. Start a new setup to capture again.'
          : 'the server stopped while the setup sandbox was starting';
    await end(session, 'failed', {
      actor: SYSTEM,
      action: 'environment.custom_image_setup.failed',
      reason: 'setup_finished',
      failureReason,
    });
  }
}
