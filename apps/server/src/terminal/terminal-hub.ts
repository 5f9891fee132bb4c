import { TERMINAL_REPLAY_BYTES, type TerminalCloseReason } from '@sandcast/contracts';
import type { SetupSessionStatus } from '@sandcast/core';
import type { PtyStream } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../clock.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import type { SetupEvents } from '../services/custom-images/setup-events.ts';
import type { SetupSessionsService } from '../services/custom-images/setup-sessions.service.ts';
import { requireRegisteredProvider } from '../services/environment-context.ts';
import { ReplayBuffer } from './replay-buffer.ts';
import { HostKeyChangedError, openSshSource } from './ssh-source.ts';
import { isSandboxTarget, type TerminalTarget } from './terminal-target.ts';
import { TerminalRefusal, type TerminalTokensService } from './terminal-tokens.service.ts';

/** Above this many unsent bytes on any attached socket the source is paused… */
export const BACKPRESSURE_HIGH_BYTES = 256 * 1024;
/** …and it resumes once every socket is below this. */
const BACKPRESSURE_LOW_BYTES = 64 * 1024;
/** Sockets attached to one shell at once (tabs of the same operator). */
const MAX_VIEWERS_PER_SHELL = 8;
/** setTimeout's ceiling; longer expiries are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Why a shell whose source exited ended, from its setup session's status. */
function endReasonOf(status: SetupSessionStatus): TerminalCloseReason {
  switch (status) {
    case 'cancelled':
      return 'setup_cancelled';
    case 'timed_out':
      return 'expired';
    case 'capturing':
    case 'promoted':
    case 'failed':
      return 'setup_finished';
    case 'starting':
    case 'waiting_for_user':
      return 'ssh_closed';
    default: {
      const never: never = status;
      return never;
    }
  }
}

/** The shell map's key: setup sessions by their id, sandboxes by theirs (prefixed, so they never collide). */
const keyOf = (target: TerminalTarget) => (isSandboxTarget(target) ? `sandbox:${target.sandbox.id}` : target.id);

/** One socket watching a shell. The hub calls these; the socket layer implements them. */
export interface TerminalViewer {
  output(chunk: Buffer): void;
  /** Bytes handed to the socket and not yet written out. */
  backlog(): number;
  end(reason: TerminalCloseReason): void;
}

/** What a viewer holds once attached. */
export interface AttachedShell {
  reattached: boolean;
  replay: Buffer;
  write(data: string | Buffer): void;
  resize(cols: number, rows: number): void;
  /** The viewer's backlog went down; the shell may resume. */
  drained(): void;
  detach(): void;
}

interface Shell {
  /** The setup session's id, or `sandbox:<id>` (logs call it setupSessionId either way). */
  setupSessionId: string;
  source: PtyStream;
  viewers: Set<TerminalViewer>;
  replay: ReplayBuffer;
  paused: boolean;
  expiryTimer: NodeJS.Timeout | null;
  ended: boolean;
}

export type TerminalHub = ReturnType<typeof createTerminalHub>;

/**
 * Keeps one shell per setup session, so a reload or a second tab re-attaches to the same shell
 * instead of starting another. Sockets come and go; the shell lives until the setup session ends
 * (finish, cancel, expiry), its process exits, or the server shuts down. Output fans out to every
 * attached socket; while any of them has more than BACKPRESSURE_HIGH_BYTES unsent, the source is
 * paused, so a flood is held back in the sandbox (the kernel's PTY buffer, the SSH window) rather
 * than in this process.
 */
export function createTerminalHub(deps: {
  providers: ProviderRegistry;
  setupSessions: SetupSessionsService;
  events: SetupEvents;
  tokens: TerminalTokensService;
  log: FastifyBaseLogger;
  clock?: Clock | undefined;
  /** Sandcast's SSH client key, offered to SSH endpoints after 'none'. */
  sshIdentity?: (() => Promise<string | undefined>) | undefined;
}) {
  const clock = deps.clock ?? systemClock;
  const shells = new Map<string, Shell>();
  const opening = new Map<string, Promise<Shell>>();
  let shuttingDown = false;

  /**
   * Runs `fn` for one viewer; if it throws (its socket broke in a way nobody foresaw), that viewer
   * is dropped and the fault logged. The shell and its other viewers carry on.
   */
  const withViewer = <T>(shell: Shell, viewer: TerminalViewer, what: string, fn: () => T, fallback: T): T => {
    try {
      return fn();
    } catch (error) {
      deps.log.error({ err: error, setupSessionId: shell.setupSessionId, what }, 'a terminal viewer failed; detaching it');
      shell.viewers.delete(viewer);
      return fallback;
    }
  };
  /** Runs a source operation; a throw (the PTY is already gone) is logged, never raised. */
  const onSource = (shell: Shell, what: string, fn: () => void) => {
    try {
      fn();
    } catch (error) {
      deps.log.warn({ err: error, setupSessionId: shell.setupSessionId, what }, 'terminal source operation failed');
    }
  };

  const pressureCheck = (shell: Shell) => {
    if (shell.paused) return;
    for (const viewer of [...shell.viewers]) {
      if (withViewer(shell, viewer, 'backlog', () => viewer.backlog(), 0) > BACKPRESSURE_HIGH_BYTES) {
        shell.paused = true;
        deps.log.debug({ setupSessionId: shell.setupSessionId }, 'terminal source paused: a socket is behind');
        onSource(shell, 'pause', () => shell.source.pause());
        return;
      }
    }
  };
  const maybeResume = (shell: Shell) => {
    if (!shell.paused || shell.ended) return;
    for (const viewer of [...shell.viewers]) {
      if (withViewer(shell, viewer, 'backlog', () => viewer.backlog(), 0) > BACKPRESSURE_LOW_BYTES) return;
    }
    shell.paused = false;
    deps.log.debug({ setupSessionId: shell.setupSessionId }, 'terminal source resumed');
    onSource(shell, 'resume', () => shell.source.resume());
  };

  const endShell = (shell: Shell, reason: TerminalCloseReason) => {
    if (shell.ended) return;
    shell.ended = true;
    if (shell.expiryTimer) clearTimeout(shell.expiryTimer);
    shells.delete(shell.setupSessionId);
    for (const viewer of [...shell.viewers]) withViewer(shell, viewer, 'end', () => viewer.end(reason), undefined);
    shell.viewers.clear();
    onSource(shell, 'close', () => shell.source.close());
  };

  /** Expiry is applied lazily on reads; reading the session when it is due makes it end on time. */
  const armExpiry = (shell: Shell, expiresAt: string) => {
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, new Date(expiresAt).getTime() - clock.now().getTime()) + 50);
    shell.expiryTimer = setTimeout(() => {
      if (shell.ended) return;
      deps.setupSessions.requireSession(shell.setupSessionId).then(
        (session) => {
          if (session.status === 'waiting_for_user') armExpiry(shell, session.expiresAt);
        },
        (error: unknown) => deps.log.warn({ err: error, setupSessionId: shell.setupSessionId }, 'terminal expiry check failed'),
      );
    }, delay);
    shell.expiryTimer.unref();
  };

  const openSource = async (target: TerminalTarget, size: { cols: number; rows: number }): Promise<PtyStream> => {
    if (isSandboxTarget(target)) {
      const { sandbox } = target;
      return requireRegisteredProvider(deps.providers, sandbox.provider).provider.openPty(sandbox.providerInstanceId!, size);
    }
    const session = target;
    const provider = requireRegisteredProvider(deps.providers, session.provider).provider;
    if (session.connectionSummary.type !== 'ssh') return provider.openPty(session.providerLeaseId!, size);
    const payload = deps.setupSessions.connectionPayload(session);
    if (payload?.type !== 'ssh') {
      throw new TerminalRefusal(
        "this server no longer holds the setup sandbox's SSH credential (it restarted since the setup began); cancel and start a new setup session",
      );
    }
    try {
      return await openSshSource({
        host: payload.host,
        port: payload.port,
        username: payload.username,
        ...size,
        identityKey: await deps.sshIdentity?.(),
        verifyHostKey: async (fingerprint) => {
          const pin = await deps.tokens.pinHostKey({ setupSessionId: session.id, host: payload.host, port: payload.port, fingerprint });
          return pin.ok ? { ok: true } : { ok: false, pinned: pin.pinned };
        },
      });
    } catch (error) {
      if (error instanceof HostKeyChangedError) {
        deps.log.warn(
          { setupSessionId: session.id, endpoint: error.endpoint, pinned: error.pinned, presented: error.presented },
          'SSH host key changed; terminal refused',
        );
        throw new TerminalRefusal(error.message);
      }
      throw error;
    }
  };

  const shellFor = async (target: TerminalTarget, size: { cols: number; rows: number }): Promise<{ shell: Shell; reattached: boolean }> => {
    const key = keyOf(target);
    const existing = shells.get(key);
    if (existing) return { shell: existing, reattached: true };
    const pending = opening.get(key);
    if (pending) return { shell: await pending, reattached: true };
    const open = (async () => {
      const source = await openSource(target, size);
      const shell: Shell = {
        setupSessionId: key,
        source,
        viewers: new Set(),
        replay: new ReplayBuffer(TERMINAL_REPLAY_BYTES),
        paused: false,
        expiryTimer: null,
        ended: false,
      };
      source.onData((chunk) => {
        shell.replay.push(chunk);
        for (const viewer of [...shell.viewers]) withViewer(shell, viewer, 'output', () => viewer.output(chunk), undefined);
        pressureCheck(shell);
      });
      // The shell exited (the operator typed `exit`), the SSH connection dropped, or the sandbox
      // was torn down because the setup ended; the session's status says which, so a teardown
      // that beats the end event still reports the setup's reason.
      source.onExit(() => {
        if (isSandboxTarget(target)) return endShell(shell, 'sandbox_ended');
        deps.setupSessions.requireSession(target.id).then(
          (now) => endShell(shell, endReasonOf(now.status)),
          () => endShell(shell, 'ssh_closed'),
        );
      });
      shells.set(key, shell);
      if (!isSandboxTarget(target)) armExpiry(shell, target.expiresAt);
      return shell;
    })();
    opening.set(key, open);
    try {
      return { shell: await open, reattached: false };
    } finally {
      opening.delete(key);
    }
  };

  const unsubscribe = deps.events.onEnded((setupSessionId, reason) => {
    const shell = shells.get(setupSessionId);
    if (shell) endShell(shell, reason);
  });

  return {
    /** Attaches a viewer to the target's shell, opening the shell if there is none. */
    async attach(target: TerminalTarget, viewer: TerminalViewer, size: { cols: number; rows: number }): Promise<AttachedShell> {
      if (shuttingDown) throw new TerminalRefusal('the server is shutting down');
      const { shell, reattached } = await shellFor(target, size);
      if (shell.ended) throw new TerminalRefusal('the terminal ended while it was being opened; ask for a new token');
      if (shell.viewers.size >= MAX_VIEWERS_PER_SHELL) {
        throw new TerminalRefusal(
          `${MAX_VIEWERS_PER_SHELL} terminals are already attached to this ${isSandboxTarget(target) ? 'sandbox' : 'setup session'}; close one first`,
        );
      }
      const replay = reattached ? shell.replay.snapshot() : Buffer.alloc(0);
      shell.viewers.add(viewer);
      if (reattached) onSource(shell, 'resize', () => shell.source.resize(size.cols, size.rows));
      return {
        reattached,
        replay,
        write: (data) => onSource(shell, 'write', () => shell.source.write(data)),
        resize: (cols, rows) => onSource(shell, 'resize', () => shell.source.resize(cols, rows)),
        drained: () => maybeResume(shell),
        detach: () => {
          shell.viewers.delete(viewer);
          maybeResume(shell);
        },
      };
    },

    /** The sandbox is going away (its session ended): its shell ends now, whatever its provider does with the PTY. */
    endSandbox(sandboxId: string): void {
      const shell = shells.get(`sandbox:${sandboxId}`);
      if (shell) endShell(shell, 'sandbox_ended');
    },

    /** Number of live shells (tests, metrics). */
    size: () => shells.size,

    /** Server shutdown: every terminal is told `server_shutdown` and its source closed. */
    closeAll(): void {
      shuttingDown = true;
      unsubscribe();
      for (const shell of [...shells.values()]) endShell(shell, 'server_shutdown');
    },
  };
}
