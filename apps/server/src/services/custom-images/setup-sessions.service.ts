import type { ConnectionPayload, ExecBody, SetupChanges } from '@sandcast/contracts';
import {
  isActiveSetupSession,
  likelySecrets,
  type Principal,
  SandcastError,
  SETUP_SESSION_LABELS,
  type SetupSession,
  type SetupSessionStatus,
} from '@sandcast/core';
import { isUniqueViolation, newId, type Store } from '@sandcast/db';
import type { ExecProcess, ExecResult, SetupConnection, SetupLease } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import type { ProviderRegistry } from '../../providers/provider-registry.ts';
import { withTimeout } from '../../with-timeout.ts';
import { recordActivity } from '../activity.service.ts';
import { bootSourceFor, type EnvironmentContextLoader, fingerprintOf, requireRegisteredProvider } from '../environment-context.ts';
import { CAPTURE_UNAVAILABLE_MESSAGE, presentTemplate, templateRefOf, UNSUPPORTED_SETUP_MESSAGE } from './present.ts';
import type { SetupEndReason, SetupEvents } from './setup-events.ts';

/** A teardown that takes longer is left to the reconciler, so a wedged backend cannot hang a request. */
const TEARDOWN_TIMEOUT_MS = 30_000;

/** At most this many changed paths are listed; the rest is summarised as truncated. */
const MAX_LISTED_CHANGES = 2000;

export interface Clock {
  now(): Date;
}

/**
 * Turns a provider's connection into what a client is handed, and what is stored. The stored
 * summary never holds a credential. The terminal/SSH layer replaces this to hand out its own.
 */
export interface ConnectionBroker {
  payloadFor(session: SetupSession, connection: SetupConnection): ConnectionPayload | Promise<ConnectionPayload>;
}

export const directConnectionBroker = {
  payloadFor: (session: SetupSession, connection: SetupConnection): ConnectionPayload =>
    connection.type === 'pty'
      ? { type: 'pty', expiresAt: session.expiresAt }
      : { ...connection, expiresAt: connection.expiresAt ?? session.expiresAt },
};

function summarize(connection: SetupConnection): Record<string, unknown> {
  return connection.type === 'pty' ? { type: 'pty' } : { type: 'ssh', host: connection.host, port: connection.port };
}

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
}

export type SetupSessionsService = ReturnType<typeof createSetupSessionsService>;

/**
 * Setup sessions: start a throwaway sandbox, let the operator prepare it, capture it as the
 * environment's active image (Finished) or throw it away (Cancel, expiry). Status changes are
 * compare-and-set; the database allows one active session per environment.
 */
export function createSetupSessionsService(deps: SetupSessionsDeps) {
  const clock = deps.clock ?? { now: () => new Date() };
  const broker = deps.broker ?? directConnectionBroker;
  const { store, events, log } = deps;
  /** Connection payloads handed out by this process (the secret part is never stored). */
  const payloads = new Map<string, ConnectionPayload>();
  /** Capture progress of sessions this process is capturing. */
  const progress = new Map<string, { phase: string; fraction?: number | undefined; startedAt: string }>();

  const providerOf = (session: SetupSession) => requireRegisteredProvider(deps.providers, session.provider).provider;

  const wrongStatus = (session: SetupSession, action: string) =>
    new SandcastError('conflict', `the setup session is ${session.status} ("${SETUP_SESSION_LABELS[session.status]}"); ${action}`, {
      status: session.status,
    });

  /** Releases the setup sandbox. Best effort: the reconciler retries what fails here. */
  const teardown = async (session: SetupSession) => {
    payloads.delete(session.id);
    if (!session.providerLeaseId) return;
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
    const from: SetupSessionStatus[] = to === 'failed' ? ['starting', 'waiting_for_user', 'capturing'] : ['starting', 'waiting_for_user'];
    const ended = await store.transaction(async (repos) => {
      const next = await repos.setupSessions.transition(session.id, from, to, { finished: true, failureReason: detail.failureReason });
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

  /** Applies expiry lazily: a session read after its expiry is timed out first. */
  const refresh = async (session: SetupSession): Promise<SetupSession> => {
    if (!isActiveSetupSession(session.status) || session.status === 'capturing') return session;
    if (new Date(session.expiresAt) > clock.now()) return session;
    const expired = await end(session, 'timed_out', { actor: SYSTEM, action: 'environment.custom_image_setup.expired', reason: 'expired' });
    return expired ?? (await store.repos.setupSessions.get(session.id)) ?? session;
  };

  const requireSession = async (sessionId: string): Promise<SetupSession> => {
    const session = await store.repos.setupSessions.get(sessionId);
    if (!session) throw new SandcastError('not_found', `no setup session with id ${sessionId}`);
    return refresh(session);
  };

  const requireRunning = async (sessionId: string, action: string): Promise<SetupSession & { providerLeaseId: string }> => {
    const session = await requireSession(sessionId);
    if (session.status !== 'waiting_for_user' || !session.providerLeaseId) throw wrongStatus(session, action);
    return session as SetupSession & { providerLeaseId: string };
  };

  const connectionPayload = (session: SetupSession): ConnectionPayload | null => {
    if (session.status !== 'waiting_for_user') return null;
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
        await end(session, 'failed', {
          actor,
          action: 'environment.custom_image_setup.failed',
          reason: 'setup_finished',
          failureReason: `the provider could not start the setup sandbox: ${(error as Error).message}`,
        });
        throw error;
      }
      const running = await store.repos.setupSessions.transition(session.id, 'starting', 'waiting_for_user', {
        providerLeaseId: lease.leaseId,
        connectionSummary: summarize(lease.connection),
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
      return {
        changes: all.slice(0, MAX_LISTED_CHANGES),
        warnings: likelySecrets(all),
        totalBytes,
        truncated: all.length > MAX_LISTED_CHANGES,
      };
    },

    async finish(sessionId: string, input: { metadata?: Record<string, unknown> | undefined }, actor: Principal) {
      const session = await requireRunning(sessionId, 'only a running setup can be finished');
      const provider = providerOf(session);
      if (!provider.capabilities.templateCapture) throw new SandcastError('capability_unsupported', CAPTURE_UNAVAILABLE_MESSAGE);
      const revision = await store.repos.environments.getRevision(session.environmentRevisionId);
      if (!revision) throw new SandcastError('not_found', 'the environment revision this setup started from no longer exists');
      const bootSource = bootSourceFor(requireRegisteredProvider(deps.providers, session.provider), revision.provider, revision.config);

      const capturing = await store.repos.setupSessions.transition(
        sessionId,
        'waiting_for_user',
        'capturing',
        {},
        { unexpiredAt: clock.now() },
      );
      if (!capturing) throw wrongStatus(await requireSession(sessionId), 'only a running, unexpired setup can be finished');
      progress.set(sessionId, { phase: 'capturing', startedAt: clock.now().toISOString() });

      const common = {
        environmentId: session.environmentId,
        provider: session.provider,
        refreshedFromTemplateId: session.sourceTemplateId,
        setupSessionId: session.id,
        revisionId: session.environmentRevisionId,
        fingerprint: fingerprintOf(bootSource),
        bootSource,
      };
      let ref: Awaited<ReturnType<typeof provider.captureTemplate>>;
      try {
        ref = await provider.captureTemplate({
          leaseId: session.providerLeaseId,
          setupSessionId: session.id,
          environmentId: session.environmentId,
          onProgress: (p) => progress.set(sessionId, { ...p, startedAt: progress.get(sessionId)?.startedAt ?? clock.now().toISOString() }),
        });
      } catch (error) {
        const failureReason = `capture failed: ${(error as Error).message}`;
        const failed = await store.transaction(async (repos) => {
          const next = await repos.setupSessions.transition(sessionId, 'capturing', 'failed', { finished: true, failureReason });
          await repos.templates.insert({
            ...common,
            kind: provider.capabilities.templateRefKind ?? 'image',
            providerRef: null,
            digest: null,
            sizeBytes: null,
            status: 'failed',
            metadata: input.metadata ?? {},
            failureReason,
          });
          await recordActivity(repos, {
            action: 'environment.custom_image_setup.failed',
            actor,
            subjectType: 'setup_session',
            subjectId: sessionId,
            details: { environmentId: session.environmentId, failureReason },
          });
          return next;
        });
        progress.delete(sessionId);
        await teardown(failed ?? capturing);
        events.ended(sessionId, 'setup_finished');
        throw error;
      }

      const templateId = newId('img');
      let result: Awaited<ReturnType<typeof promote>>;
      const promote = () =>
        store.transaction(async (repos) => {
          const promoted = await repos.setupSessions.transition(sessionId, 'capturing', 'promoted', { finished: true });
          if (!promoted)
            throw new SandcastError('conflict', 'the setup session changed during the capture; the captured image was not promoted');
          const superseded = await repos.templates.supersedeActive(session.environmentId, templateId);
          const template = await repos.templates.insert({
            ...common,
            id: templateId,
            kind: ref.kind,
            providerRef: ref.ref,
            digest: ref.digest ?? null,
            sizeBytes: ref.sizeBytes ?? null,
            status: 'active',
            metadata: { ...ref.metadata, ...input.metadata },
            failureReason: null,
          });
          await recordActivity(repos, {
            action: 'environment.custom_image_setup.finished',
            actor,
            subjectType: 'setup_session',
            subjectId: sessionId,
            details: {
              environmentId: session.environmentId,
              templateId,
              supersededTemplateId: superseded?.id ?? null,
              kind: ref.kind,
              providerRef: ref.ref,
            },
          });
          return { session: promoted, template: presentTemplate(template) };
        });
      try {
        result = await promote();
      } catch (error) {
        log.error({ err: error, sessionId }, 'promoting a captured image failed; deleting the artefact');
        await store.repos.setupSessions.transition(sessionId, 'capturing', 'failed', {
          finished: true,
          failureReason: `the captured image could not be promoted: ${(error as Error).message}`,
        });
        if (provider.capabilities.templateDelete) await provider.deleteTemplate(ref).catch(() => undefined);
        progress.delete(sessionId);
        await teardown(capturing);
        events.ended(sessionId, 'setup_finished');
        throw error;
      }
      progress.delete(sessionId);
      await teardown(result.session);
      events.ended(sessionId, 'setup_finished');
      return result;
    },

    async cancel(sessionId: string, input: { reason?: string | undefined }, actor: Principal): Promise<SetupSession> {
      const session = await requireSession(sessionId);
      if (session.status === 'capturing') throw wrongStatus(session, 'a capture cannot be interrupted; wait for it to finish');
      if (!isActiveSetupSession(session.status)) throw wrongStatus(session, 'it has already ended');
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

    /**
     * After a restart: a session caught in `starting` or `capturing` by a crash is failed (the
     * active image was never touched), and a running one whose sandbox is gone is failed too.
     */
    async recoverAfterRestart(): Promise<void> {
      for (const session of await store.repos.setupSessions.listActive()) {
        if (session.status === 'waiting_for_user') {
          const lease = session.providerLeaseId;
          const registered = deps.providers.get(session.provider);
          const alive =
            lease && registered
              ? (await registered.provider.getInteractiveSetup(lease).catch(() => ({ status: 'missing' }))).status !== 'missing'
              : false;
          if (alive) continue;
          await end(session, 'failed', {
            actor: SYSTEM,
            action: 'environment.custom_image_setup.failed',
            reason: 'setup_finished',
            failureReason: 'the setup sandbox was lost while the server was down',
          });
          continue;
        }
        const failureReason =
          session.status === 'capturing'
            ? 'the server stopped during the capture; the previous image is still active. Start a new setup to capture again.'
            : 'the server stopped while the setup sandbox was starting';
        await end(session, 'failed', {
          actor: SYSTEM,
          action: 'environment.custom_image_setup.failed',
          reason: 'setup_finished',
          failureReason,
        });
      }
    },
  };
}
