import type { AddressInfo } from 'node:net';
import { isRunningSetup } from '@sandcast/core';
import type { PtyStream } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import ssh2 from 'ssh2';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import type { SetupEvents } from '../services/custom-images/setup-events.ts';
import type { SetupSessionsService } from '../services/custom-images/setup-sessions.service.ts';
import { requireRegisteredProvider } from '../services/environment-context.ts';
import type { GatewayCredentials } from './gateway-credentials.ts';

/** Printed by the exec wrapper once the PTY is set up; everything before it is the wrapper's. */
const EXEC_READY_MARKER = '\u001eSANDCAST-EXEC-READY\u001e';
/**
 * Runs an exec request without a client PTY through the provider's PTY: no echo and no `\r\n`
 * translation, so output reads as a plain pipe would. Canonical mode stays on, so end of input
 * (Ctrl-D) still reaches the command. stdout and stderr arrive together on stdout.
 */
const EXEC_WRAPPER = `stty -echo -onlcr 2>/dev/null; printf '${EXEC_READY_MARKER.replaceAll('\u001e', '\\036')}'; exec sh -c "$1"`;

export interface SshGateway {
  listen(host: string, port: number): Promise<{ host: string; port: number }>;
  /** Ends every connection (the operator's ssh sees the server close) and stops listening. */
  close(): Promise<void>;
}

interface Connection {
  client: ssh2.Connection;
  setupSessionId: string | null;
}

/**
 * Sandcast's SSH server. The username is a setup session's credential (authentication method
 * `none`); once accepted, `shell` and `exec` requests are bridged to the setup sandbox's PTY through
 * the provider. Connections end when their setup session finishes, is cancelled or expires.
 */
export function createSshGateway(deps: {
  hostKey: string;
  credentials: GatewayCredentials;
  setupSessions: SetupSessionsService;
  providers: ProviderRegistry;
  events: SetupEvents;
  log: FastifyBaseLogger;
}): SshGateway {
  const connections = new Set<Connection>();
  const log = deps.log.child({ component: 'ssh-gateway' });

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

  /**
   * Bridges a channel to a PTY that is still being opened. The channel is accepted at once because
   * clients send input and end-of-input right after the request, before the PTY exists; that is
   * held and delivered when the PTY (and, for plain exec, its wrapper) is ready. A full channel
   * pauses the PTY until it drains.
   */
  const serve = (channel: ssh2.ServerChannel, opening: Promise<PtyStream>, options: { stripUntilMarker: boolean }) => {
    let pty: PtyStream | null = null;
    let ready = false;
    let closed = false;
    let eofPending = false;
    const held: Buffer[] = [];
    channel.on('data', (input: Buffer) => {
      if (pty && ready) pty.write(input);
      else held.push(input);
    });
    // End of input: in canonical mode a ^D at the start of a line is end-of-file for the reader.
    channel.on('end', () => {
      if (!options.stripUntilMarker) return;
      if (pty && ready) pty.write('\u0004');
      else eofPending = true;
    });
    channel.on('close', () => {
      closed = true;
      pty?.close();
    });
    opening.then(
      (stream) => {
        if (closed) return stream.close();
        pty = stream;
        const flush = () => {
          ready = true;
          for (const input of held.splice(0)) stream.write(input);
          if (eofPending) stream.write('\u0004');
        };
        if (!options.stripUntilMarker) flush();
        let head = '';
        stream.onData((chunk) => {
          let data = chunk;
          if (!ready) {
            head += chunk.toString('latin1');
            const at = head.indexOf(EXEC_READY_MARKER);
            if (at < 0) return;
            data = Buffer.from(head.slice(at + EXEC_READY_MARKER.length), 'latin1');
            head = '';
            flush();
            if (data.length === 0) return;
          }
          if (!channel.write(data)) {
            stream.pause();
            channel.once('drain', () => stream.resume());
          }
        });
        stream.onExit(({ exitCode, signal }) => {
          if (signal && exitCode === null) channel.exit(signal.replace(/^SIG/, ''), false, '');
          else channel.exit(exitCode ?? 0);
          channel.end();
        });
      },
      (error: Error) => {
        channel.stderr.write(`sandcast: ${error.message}\r\n`);
        channel.exit(1);
        channel.end();
      },
    );
  };

  const server = new ssh2.Server({ hostKeys: [deps.hostKey], ident: 'Sandcast' }, (client) => {
    const connection: Connection = { client, setupSessionId: null };
    connections.add(connection);
    client.on('close', () => connections.delete(connection));
    client.on('error', (error) => log.debug({ err: error }, 'ssh client error'));

    client.on('authentication', (ctx) => {
      // Only the credential in the username is accepted; the method is always `none`.
      if (ctx.method !== 'none') return ctx.reject(['none']);
      sessionFor(ctx.username).then(
        (session) => {
          if (!session) return ctx.reject([]);
          connection.setupSessionId = session.id;
          ctx.accept();
        },
        (error: unknown) => {
          log.warn({ err: error }, 'ssh authentication failed');
          ctx.reject([]);
        },
      );
    });

    client.on('ready', () => {
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        let pty: ssh2.PseudoTtyInfo | null = null;
        let open: PtyStream | null = null;
        session.on('pty', (accept, _reject, info) => {
          pty = info;
          accept?.();
        });
        session.on('window-change', (accept, _reject, info) => {
          open?.resize(info.cols, info.rows);
          accept?.();
        });
        session.on('env', (accept) => accept?.());
        const start = (accept: () => ssh2.ServerChannel | undefined, command: string[] | undefined, stripUntilMarker: boolean) => {
          const channel = accept();
          if (!channel) return;
          const opening = openPty(connection, { cols: pty?.cols || 80, rows: pty?.rows || 24, term: pty?.term, command });
          opening.then(
            (stream) => {
              open = stream;
            },
            (error: unknown) =>
              log.warn({ err: error, setupSessionId: connection.setupSessionId }, 'could not open a PTY for an SSH request'),
          );
          serve(channel, opening, { stripUntilMarker });
        };
        session.on('shell', (accept) => start(accept, undefined, false));
        session.on('exec', (accept, _reject, info) => {
          if (pty) start(accept, ['sh', '-c', info.command], false);
          else start(accept, ['sh', '-c', EXEC_WRAPPER, 'sh', info.command], true);
        });
        session.on('subsystem', (_accept, reject) => reject?.());
      });
    });
  });

  const endSession = (setupSessionId: string) => {
    for (const connection of connections) if (connection.setupSessionId === setupSessionId) connection.client.end();
  };
  const unsubscribe = deps.events.onEnded((setupSessionId) => {
    endSession(setupSessionId);
    deps.credentials
      .revokeForSession(setupSessionId)
      .catch((error: unknown) => log.warn({ err: error }, 'revoking SSH credentials failed'));
  });

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
          const address = server.address() as AddressInfo;
          resolve({ host, port: address.port });
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        unsubscribe();
        for (const connection of connections) connection.client.end();
        if (!server.listening) return resolve();
        server.close(() => resolve());
      }),
  };
}
