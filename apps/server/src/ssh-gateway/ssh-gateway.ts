import type { AddressInfo } from 'node:net';
import { isRunningSetup } from '@sandcast/core';
import type { PtyStream } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import ssh2 from 'ssh2';
import type { Clock } from '../clock.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import type { SetupEvents } from '../services/custom-images/setup-events.ts';
import type { SetupSessionsService } from '../services/custom-images/setup-sessions.service.ts';
import { requireRegisteredProvider } from '../services/environment-context.ts';
import { bridgeChannel, EXEC_WRAPPER } from './channel-bridge.ts';
import { connectionGuard, type Guard } from './connection-guard.ts';
import type { GatewayCredentials } from './gateway-credentials.ts';
import { LoginThrottle, type LoginThrottleOptions, sourceOf, type ThrottleVerdict } from './login-throttle.ts';

/** Session channels (shells, commands) one connection may have open at once, unless configured. */
const DEFAULT_MAX_CHANNELS_PER_CONNECTION = 4;

export interface SshGateway {
  listen(host: string, port: number): Promise<{ host: string; port: number }>;
  /** Ends every connection (the operator's ssh sees the server close) and stops listening. */
  close(): Promise<void>;
}

interface Connection {
  client: ssh2.Connection;
  source: string;
  setupSessionId: string | null;
  /** Session channels open now (counted against the cap). */
  channels: number;
  /** An over-the-cap channel being answered with the refusal; at most one at a time. */
  refusing: boolean;
  closed: boolean;
  guard: Guard;
  end(): void;
}

/** A terminal dimension a client asked for, held to what the browser terminal accepts (1–1000). */
const dimension = (value: number | undefined, fallback: number) =>
  Number.isInteger(value) && value! >= 1 ? Math.min(value!, 1000) : fallback;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
const backOffMessage = (source: string, verdict: Extract<ThrottleVerdict, { allowed: false }>) =>
  `Sandcast: ${verdict.failures} failed logins from ${source}; logins from this address are refused for another ${seconds(verdict.retryAfterMs)} s. ` +
  'Check the ssh command of your setup session (it changes with every session) and try again then.';

/**
 * The banner (SSH_MSG_USERAUTH_BANNER) is how an SSH server speaks to the user before login;
 * OpenSSH prints it. ssh2 takes one banner for the whole server, so a per-connection one is set on
 * the connection's protocol before the client asks for authentication. If a future ssh2 lays this
 * out differently, the refusal simply comes without its explanation.
 */
function setBanner(client: ssh2.Connection, text: string): void {
  const protocol = (client as unknown as { _protocol?: { _banner?: string } })._protocol;
  if (protocol && '_banner' in protocol) protocol._banner = `${text}\r\n`;
}

/**
 * Sandcast's SSH server. The username is a setup session's credential (authentication method
 * `none`); once accepted, `shell` and `exec` requests are bridged to the setup sandbox's PTY through
 * the provider. Connections end when their setup session finishes, is cancelled or expires.
 *
 * Hostile clients are expected: failed logins back off exponentially per source address
 * (LoginThrottle), a connection may hold at most `maxChannelsPerConnection` sessions, and every
 * callback of a connection runs under a guard, so one connection's fault closes that connection
 * and never the process.
 */
export function createSshGateway(deps: {
  hostKey: string;
  credentials: GatewayCredentials;
  setupSessions: SetupSessionsService;
  providers: ProviderRegistry;
  events: SetupEvents;
  log: FastifyBaseLogger;
  clock?: Clock | undefined;
  /** Session channels (shells, commands) one connection may have open at once. Default 4. */
  maxChannelsPerConnection?: number | undefined;
  /** Back-off after failed logins; see LoginThrottle for the defaults. */
  loginThrottle?: LoginThrottleOptions | undefined;
}): SshGateway {
  const connections = new Set<Connection>();
  const log = deps.log.child({ component: 'ssh-gateway' });
  const maxChannels = deps.maxChannelsPerConnection ?? DEFAULT_MAX_CHANNELS_PER_CONNECTION;
  const throttle = new LoginThrottle({ clock: deps.clock, ...deps.loginThrottle });

  const sessionFor = async (credential: string) => {
    const setupSessionId = await deps.credentials.resolve(credential);
    if (!setupSessionId) return null;
    const session = await deps.setupSessions.requireSession(setupSessionId).catch(() => null);
    return isRunningSetup(session) ? session : null;
  };

  const openPty = async (connection: Connection, options: { cols: number; rows: number; term?: string; command?: string[] }) => {
    const session = await deps.setupSessions.requireSession(connection.setupSessionId!);
    if (!isRunningSetup(session)) throw new Error(`the setup session is ${session.status}`);
    const provider = requireRegisteredProvider(deps.providers, session.provider).provider;
    return provider.openPty(session.providerLeaseId, {
      cols: options.cols,
      rows: options.rows,
      command: options.command,
      env: options.term ? { TERM: options.term } : undefined,
    });
  };

  const authenticate = async (connection: Connection, ctx: ssh2.AuthContext) => {
    // Only the credential in the username is accepted; the method is always `none`.
    if (ctx.method !== 'none') return ctx.reject(['none']);
    const verdict = throttle.check(connection.source);
    if (!verdict.allowed) {
      // Refused unchecked: while a source backs off, no credential from it is even looked at.
      log.info(
        { source: connection.source, failures: verdict.failures, retryAfterMs: verdict.retryAfterMs },
        'ssh login refused: back-off',
      );
      ctx.reject([]);
      connection.end();
      return;
    }
    // Counted as a failure before the lookup and forgiven on success: logins sent in parallel from
    // one source are handled one after another up to here, so they cannot all pass one check.
    const state = throttle.failed(connection.source);
    let session: Awaited<ReturnType<typeof sessionFor>>;
    try {
      session = await sessionFor(ctx.username);
    } catch (error) {
      // Not the client's fault (the database is unreachable), but still counted: refused.
      log.warn({ err: error }, 'ssh authentication failed');
      if (!connection.closed) ctx.reject([]);
      return;
    }
    if (session) throttle.succeeded(connection.source);
    if (connection.closed) return;
    if (!session) {
      ctx.reject([]);
      if (state.blockedUntil > 0) {
        log.warn({ source: connection.source, failures: state.failures }, 'ssh logins failing from one source: backing off');
        connection.end(); // the next connection is told why
      }
      return;
    }
    connection.setupSessionId = session.id;
    ctx.accept();
  };

  /** A session channel past the cap: accepted only to say why, then closed; a second one at once is turned away silently. */
  const refuseSession = (connection: Connection, accept: () => ssh2.Session, reject: () => void) => {
    if (connection.refusing) return reject();
    connection.refusing = true;
    const { guard } = connection;
    const session = accept();
    session.on('close', () => {
      connection.refusing = false;
    });
    const refuse = guard('refused channel', (acceptRequest: (() => ssh2.ServerChannel | undefined) | undefined) => {
      const channel = acceptRequest?.();
      if (!channel) return;
      channel.on('error', () => undefined);
      channel.stderr.on('error', () => undefined);
      channel.stderr.write(
        `sandcast: this connection already has ${maxChannels} ${maxChannels === 1 ? 'session' : 'sessions'} open, the most one connection may hold ` +
          '(SANDCAST_SSH_MAX_CHANNELS_PER_CONNECTION); close one, or open another connection\r\n',
      );
      channel.exit(1);
      channel.end();
    });
    session.on(
      'pty',
      guard('pty', (acceptRequest) => acceptRequest?.()),
    );
    session.on(
      'env',
      guard('env', (acceptRequest) => acceptRequest?.()),
    );
    session.on('shell', refuse);
    session.on('exec', refuse);
    session.on(
      'subsystem',
      guard('subsystem', (_accept, rejectRequest) => rejectRequest?.()),
    );
  };

  const openSession = (connection: Connection, accept: () => ssh2.Session, reject: () => void) => {
    if (connection.channels >= maxChannels) return refuseSession(connection, accept, reject);
    const { guard } = connection;
    connection.channels++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      connection.channels--;
    };
    const session = accept();
    session.on('close', release);
    let pty: ssh2.PseudoTtyInfo | null = null;
    let open: PtyStream | null = null;
    let started = false;
    session.on(
      'pty',
      guard('pty', (acceptRequest: (() => void) | undefined, _reject: unknown, info: ssh2.PseudoTtyInfo) => {
        pty = info;
        acceptRequest?.();
      }),
    );
    session.on(
      'window-change',
      guard('window-change', (acceptRequest: (() => void) | undefined, _reject: unknown, info: ssh2.WindowChangeInfo) => {
        open?.resize(dimension(info.cols, 80), dimension(info.rows, 24));
        acceptRequest?.();
      }),
    );
    session.on(
      'env',
      guard('env', (acceptRequest) => acceptRequest?.()),
    );
    const start = (
      acceptRequest: () => ssh2.ServerChannel | undefined,
      rejectRequest: (() => void) | undefined,
      command: string[] | undefined,
      stripUntilMarker: boolean,
    ) => {
      // One shell or command per session channel, as in OpenSSH.
      if (started) return rejectRequest?.();
      started = true;
      const channel = acceptRequest();
      if (!channel) return release();
      channel.on('close', release);
      const size = { cols: dimension(pty?.cols, 80), rows: dimension(pty?.rows, 24) };
      const opening = openPty(connection, { ...size, term: pty?.term, command });
      opening.then(
        (stream) => {
          open = stream;
        },
        (error: unknown) => log.warn({ err: error, setupSessionId: connection.setupSessionId }, 'could not open a PTY for an SSH request'),
      );
      bridgeChannel(channel, opening, { stripUntilMarker, guard });
    };
    session.on(
      'shell',
      guard('shell', (acceptRequest: () => ssh2.ServerChannel | undefined, rejectRequest: (() => void) | undefined) =>
        start(acceptRequest, rejectRequest, undefined, false),
      ),
    );
    session.on(
      'exec',
      guard('exec', (acceptRequest: () => ssh2.ServerChannel | undefined, rejectRequest: (() => void) | undefined, info: ssh2.ExecInfo) => {
        if (pty) start(acceptRequest, rejectRequest, ['sh', '-c', info.command], false);
        else start(acceptRequest, rejectRequest, ['sh', '-c', EXEC_WRAPPER, 'sh', info.command], true);
      }),
    );
    session.on(
      'subsystem',
      guard('subsystem', (_accept, rejectRequest) => rejectRequest?.()),
    );
  };

  const server = new ssh2.Server({ hostKeys: [deps.hostKey], ident: 'Sandcast' }, (client, info) => {
    const source = sourceOf(info.ip);
    const end = () => {
      try {
        client.end();
      } catch {
        (client as unknown as { _sock?: { destroy(): void } })._sock?.destroy();
      }
    };
    const connection: Connection = {
      client,
      source,
      setupSessionId: null,
      channels: 0,
      refusing: false,
      closed: false,
      end,
      guard: connectionGuard((error, what) => {
        log.warn({ err: error, what, source, setupSessionId: connection.setupSessionId }, 'SSH connection fault; closing that connection');
        end();
      }),
    };
    const { guard } = connection;
    connections.add(connection);
    client.on('close', () => {
      connection.closed = true;
      connections.delete(connection);
    });
    // Resets, timeouts and protocol errors of one client are its own business.
    client.on('error', (error) => log.debug({ err: error, source }, 'ssh client error'));
    const verdict = throttle.check(source);
    if (!verdict.allowed) setBanner(client, backOffMessage(source, verdict));
    client.on(
      'authentication',
      guard('authentication', (ctx: ssh2.AuthContext) => authenticate(connection, ctx)),
    );
    client.on(
      'ready',
      guard('ready', () => {
        client.on(
          'session',
          guard('session', (accept: () => ssh2.Session, reject: () => void) => openSession(connection, accept, reject)),
        );
      }),
    );
  });
  // After listening, a server-level error (EMFILE on accept) is logged; it must not end the process.
  const onServerError = (error: Error) => log.error({ err: error }, 'SSH gateway error');

  const endSession = (setupSessionId: string) => {
    for (const connection of connections) if (connection.setupSessionId === setupSessionId) connection.end();
  };
  const unsubscribe = deps.events.onEnded((setupSessionId) => {
    endSession(setupSessionId);
    deps.credentials
      .revokeForSession(setupSessionId)
      .catch((error: unknown) => log.warn({ err: error }, 'revoking SSH credentials failed'));
  });

  let listening = false;
  return {
    listen: (host, port) =>
      new Promise((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) => {
          reject(
            error.code === 'EADDRINUSE'
              ? new Error(
                  `the SSH gateway cannot listen on ${host}:${port}: the port is in use. Set SANDCAST_SSH_PORT to a free port, or to "off"`,
                )
              : error,
          );
        });
        server.listen(port, host, () => {
          listening = true;
          server.removeAllListeners('error');
          server.on('error', onServerError);
          const address = server.address() as AddressInfo;
          resolve({ host, port: address.port });
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        unsubscribe();
        for (const connection of connections) connection.end();
        // ssh2's Server has no `listening` of its own (it wraps a net.Server): asking it always
        // said "not listening", and the listening socket outlived close() and the process with it.
        if (!listening) return resolve();
        listening = false;
        server.close(() => resolve());
      }),
  };
}
