import { createHash, randomBytes } from 'node:crypto';
import { API_PATHS, fillPath, TERMINAL_TOKEN_TTL_MS, type TerminalSessionTokenAnswer } from '@sandcast/contracts';
import {
  isRunningSetup,
  type Principal,
  type Sandbox,
  SandcastError,
  SETUP_SESSION_LABELS,
  type Session,
  type SetupSession,
} from '@sandcast/core';
import type { Store, TerminalSessionRecord } from '@sandcast/db';
import { type Clock, systemClock } from '../clock.ts';
import type { SetupSessionsService } from '../services/custom-images/setup-sessions.service.ts';
import type { SandboxTerminalTarget } from './terminal-target.ts';

/** A refused terminal connection; the message is sent to the client as `{type:"error"}`. */
export class TerminalRefusal extends Error {}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

const requireRunningSandbox = (sandbox: Sandbox) => {
  if (sandbox.status !== 'running' || !sandbox.providerInstanceId) {
    throw new SandcastError('conflict', `sandbox ${sandbox.id} is ${sandbox.status}; a terminal opens only while it is running`, {
      status: sandbox.status,
    });
  }
};

const connectionTypeOf = (session: SetupSession): 'pty' | 'ssh' => (session.connectionSummary.type === 'ssh' ? 'ssh' : 'pty');

export type TerminalTokensService = ReturnType<typeof createTerminalTokensService>;

/**
 * Connect tokens for browser terminals: 32 random bytes, stored only as a SHA-256 hash, used once
 * (a compare-and-set in the database), usable until min(5 minutes, setup expiry, payload expiry).
 */
export function createTerminalTokensService(deps: { store: Store; setupSessions: SetupSessionsService; clock?: Clock | undefined }) {
  const clock = deps.clock ?? systemClock;
  const { store, setupSessions } = deps;

  const requireRunning = async (setupSessionId: string, action: string) => {
    const session = await setupSessions.requireSession(setupSessionId);
    if (!isRunningSetup(session)) {
      throw new SandcastError('conflict', `the setup session is ${session.status} ("${SETUP_SESSION_LABELS[session.status]}"); ${action}`, {
        status: session.status,
      });
    }
    return session;
  };

  /** Uses a token once for `target`; a TerminalRefusal says why it cannot. */
  const consume = async (
    target: { setupSessionId: string } | { sandboxId: string },
    input: { terminalSessionId: string; token: string },
  ) => {
    const outcome = await store.repos.terminalSessions.consume({
      ...target,
      id: input.terminalSessionId,
      tokenHash: hashToken(input.token),
      now: clock.now(),
    });
    if (outcome.ok) return outcome.record;
    switch (outcome.why) {
      case 'unknown':
        throw new TerminalRefusal('the token is not valid for this terminal session; ask for a new terminal-session-token');
      case 'already_used':
        throw new TerminalRefusal('the token was already used (tokens are single-use); ask for a new terminal-session-token to reconnect');
      case 'expired':
        throw new TerminalRefusal('the token expired before it was used; ask for a new terminal-session-token');
      default: {
        const never: never = outcome.why;
        return never;
      }
    }
  };

  return {
    async issue(setupSessionId: string, actor: Principal): Promise<TerminalSessionTokenAnswer> {
      const session = await requireRunning(setupSessionId, 'a terminal opens only while the setup is running');
      const now = clock.now().getTime();
      const payloadExpiry = setupSessions.connectionPayload(session)?.expiresAt;
      const connectExpiresAt = new Date(
        Math.min(
          now + TERMINAL_TOKEN_TTL_MS,
          new Date(session.expiresAt).getTime(),
          payloadExpiry ? new Date(payloadExpiry).getTime() : Number.POSITIVE_INFINITY,
        ),
      );
      const token = randomBytes(32).toString('base64url');
      const record = await store.repos.terminalSessions.insert({
        setupSessionId,
        tokenHash: hashToken(token),
        connectionType: connectionTypeOf(session),
        connectExpiresAt,
        sessionExpiresAt: new Date(session.expiresAt),
        createdByKeyId: actor.keyId,
      });
      return {
        id: record.id,
        token,
        expiresAt: record.connectExpiresAt,
        setupSessionId,
        sessionId: null,
        environmentId: session.environmentId,
        connectionType: record.connectionType,
        websocketPath: `${fillPath(API_PATHS.terminalSocket, { sessionId: setupSessionId })}?terminalSessionId=${encodeURIComponent(record.id)}`,
      };
    },

    /**
     * A connect token for a session's primary sandbox (the caller checked the session is the
     * actor's and active): usable for 5 minutes; the terminal then lives as long as the sandbox.
     */
    async issueForSession(session: Session, sandbox: Sandbox, actor: Principal): Promise<TerminalSessionTokenAnswer> {
      requireRunningSandbox(sandbox);
      const token = randomBytes(32).toString('base64url');
      const record = await store.repos.terminalSessions.insert({
        sandboxId: sandbox.id,
        tokenHash: hashToken(token),
        connectionType: 'pty',
        connectExpiresAt: new Date(clock.now().getTime() + TERMINAL_TOKEN_TTL_MS),
        sessionExpiresAt: null,
        createdByKeyId: actor.keyId,
      });
      return {
        id: record.id,
        token,
        expiresAt: record.connectExpiresAt,
        setupSessionId: null,
        sessionId: session.id,
        environmentId: sandbox.environmentId,
        connectionType: 'pty',
        websocketPath: `${fillPath(API_PATHS.sessionTerminalSocket, { id: session.id })}?terminalSessionId=${encodeURIComponent(record.id)}`,
      };
    },

    /** Uses a token once; throws a TerminalRefusal saying why it cannot connect. */
    async authenticate(input: {
      setupSessionId: string;
      terminalSessionId: string;
      token: string;
    }): Promise<{ record: TerminalSessionRecord; session: SetupSession }> {
      const record = await consume({ setupSessionId: input.setupSessionId }, input);
      const session = await setupSessions.requireSession(input.setupSessionId).catch(() => null);
      if (!isRunningSetup(session)) {
        const status = session?.status ?? 'gone';
        throw new TerminalRefusal(
          `the setup session is ${status}${session ? ` ("${SETUP_SESSION_LABELS[session.status]}")` : ''}; a terminal opens only while the setup is running`,
        );
      }
      return { record, session };
    },

    /**
     * Uses a token for a session's sandbox terminal once: the session must still be active and
     * its primary sandbox running.
     */
    async authenticateSession(input: { sessionId: string; terminalSessionId: string; token: string }): Promise<SandboxTerminalTarget> {
      const session = await store.repos.sessions.get(input.sessionId);
      const sandboxId = session?.primarySandboxId;
      if (!session || !sandboxId) throw new TerminalRefusal('the token is not valid for this terminal session; ask for a new pty-token');
      await consume({ sandboxId }, input);
      if (session.status !== 'active') throw new TerminalRefusal('the session has ended; a terminal opens only while it is active');
      const sandbox = await store.repos.sandboxes.get(sandboxId);
      if (sandbox?.status !== 'running' || !sandbox.providerInstanceId) {
        throw new TerminalRefusal(`the session's sandbox is ${sandbox?.status ?? 'gone'}; a terminal opens only while it is running`);
      }
      await store.repos.sandboxes.touch(sandbox.id, clock.now());
      return { kind: 'sandbox', sandbox };
    },

    /** A token that appeared in a URL counts as leaked: it can no longer be used. */
    revokeExposed: (terminalSessionId: string) => store.repos.terminalSessions.revokeUnused(terminalSessionId, clock.now()),

    markClosed: (terminalSessionId: string, reason: string) =>
      store.repos.terminalSessions.markClosed(terminalSessionId, reason, clock.now()),

    /** Pins an SSH host key on first use for the setup session's lifetime. */
    pinHostKey: (input: { setupSessionId: string; host: string; port: number; fingerprint: string }) =>
      store.repos.terminalSessions.pinHostKey(input),
  };
}
