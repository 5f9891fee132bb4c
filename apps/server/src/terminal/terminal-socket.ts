import { StringDecoder } from 'node:string_decoder';
import {
  TERMINAL_CLOSE_CODES,
  TERMINAL_MAX_FRAME_BYTES,
  type TerminalClientFrame,
  TerminalClientFrameSchema,
  type TerminalCloseReason,
  type TerminalServerFrame,
  TerminalSocketQuerySchema,
} from '@sandcast/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { connectionGuard } from '../ssh-gateway/connection-guard.ts';
import type { AttachedShell, TerminalHub, TerminalViewer } from './terminal-hub.ts';
import type { TerminalTarget } from './terminal-target.ts';
import { TerminalRefusal, type TerminalTokensService } from './terminal-tokens.service.ts';

/** Frames a client may send while its auth frame is being checked; more is a misbehaving client. */
const MAX_QUEUED_FRAMES = 256;
/** After `closed`/`error`, a socket that does not finish the close handshake is cut off. */
const CLOSE_GRACE_MS = 2000;
/** Pings keep an idle terminal's connection alive through proxies that drop quiet sockets. */
const HEARTBEAT_MS = 30_000;

export interface TerminalSocketDeps {
  hub: TerminalHub;
  tokens: TerminalTokensService;
  log: FastifyBaseLogger;
  authTimeoutMs: number;
  /** What the path's id names: a setup session (`:sessionId`, the default) or a session (`:id`, its primary sandbox). */
  target?: 'setup' | 'session' | undefined;
}

const byteLength = (data: RawData): number =>
  Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data instanceof ArrayBuffer ? data.byteLength : data.length;
const toBuffer = (data: RawData): Buffer =>
  Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? Buffer.from(data) : data;

/**
 * One browser terminal connection. The HTTP layer lets anyone open the socket: a browser cannot
 * send an Authorization header on a WebSocket, and a credential in the URL would end up in logs
 * and history. The credential is the single-use token in the first frame; until it is accepted
 * nothing but a `resize` is read, and every refusal sends `{type:"error"}` and closes with 1008.
 */
export function handleTerminalSocket(
  socket: WebSocket,
  request: { params: { sessionId?: string; id?: string }; query: unknown },
  deps: TerminalSocketDeps,
): void {
  // Named so in logs for both kinds of target.
  const setupSessionId = (deps.target === 'session' ? request.params.id : request.params.sessionId) ?? '';
  let state: 'awaiting_auth' | 'authenticating' | 'attached' | 'closed' = 'awaiting_auth';
  let attached: AttachedShell | null = null;
  let terminalSessionId: string | null = null;
  let pendingSize: { cols: number; rows: number } | null = null;
  const queued: Array<{ data: RawData; isBinary: boolean }> = [];
  let unsent = 0;
  let heartbeat: NodeJS.Timeout | null = null;

  const send = (frame: TerminalServerFrame) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
  };
  const close = (code: number, frame: TerminalServerFrame) => {
    if (state === 'closed') return;
    state = 'closed';
    clearTimeout(authTimer);
    if (heartbeat) clearInterval(heartbeat);
    send(frame);
    socket.close(code, frame.type === 'closed' ? frame.reason : 'refused');
    setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
    attached?.detach();
  };
  const refuse = (message: string, code: number = TERMINAL_CLOSE_CODES.policy) => close(code, { type: 'error', message });

  const authTimer = setTimeout(
    () => refuse(`no {type:"auth", token} frame arrived within ${Math.round(deps.authTimeoutMs / 100) / 10} s of connecting`),
    deps.authTimeoutMs,
  );
  authTimer.unref();

  const rawQuery = (request.query ?? {}) as Record<string, unknown>;
  if ('token' in rawQuery) {
    // Never echoed or logged. The token is burnt: a URL ends up in logs, proxies and history.
    if (typeof rawQuery.terminalSessionId === 'string') {
      deps.tokens.revokeExposed(rawQuery.terminalSessionId).catch(() => undefined);
    }
    refuse(
      'the token must not be sent in the URL; it is now void. Ask for a new terminal-session-token and send it in the first frame as {type:"auth", token}',
    );
    return;
  }
  const query = TerminalSocketQuerySchema.safeParse(rawQuery);
  if (!query.success) {
    refuse(`bad query string: ${query.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ')}`);
    return;
  }
  const jsonOutput = query.data.output === 'json';
  const decoder = new StringDecoder('utf8');
  const size = { cols: query.data.cols, rows: query.data.rows };

  const viewer: TerminalViewer = {
    output: (chunk) => {
      if (socket.readyState !== socket.OPEN) return;
      const payload = jsonOutput ? JSON.stringify({ type: 'output', data: decoder.write(chunk) } satisfies TerminalServerFrame) : chunk;
      const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
      unsent += length;
      try {
        socket.send(payload, { binary: !jsonOutput }, () => {
          unsent -= length;
          try {
            attached?.drained();
          } catch (error) {
            deps.log.error({ err: error, setupSessionId }, 'terminal resume failed');
          }
        });
      } catch (error) {
        // This socket cannot take output: it is cut off (and so detached); the shell's other viewers go on.
        unsent -= length;
        deps.log.error({ err: error, setupSessionId }, 'terminal socket cannot send; closing it');
        socket.terminate();
      }
    },
    backlog: () => Math.max(unsent, socket.bufferedAmount),
    end: (reason: TerminalCloseReason) => {
      attached = null; // the hub has already let go of this viewer
      if (terminalSessionId) deps.tokens.markClosed(terminalSessionId, reason).catch(() => undefined);
      close(reason === 'server_shutdown' ? TERMINAL_CLOSE_CODES.goingAway : TERMINAL_CLOSE_CODES.normal, { type: 'closed', reason });
    },
  };

  const parseFrame = (data: RawData, isBinary: boolean): TerminalClientFrame | string => {
    if (isBinary) return 'frames are JSON text; binary frames are accepted only as input after auth';
    let json: unknown;
    try {
      json = JSON.parse(toBuffer(data).toString('utf8'));
    } catch {
      return 'a frame is not valid JSON';
    }
    const parsed = TerminalClientFrameSchema.safeParse(json);
    return parsed.success ? parsed.data : `a frame is not valid: ${parsed.error.issues.map((i) => i.message).join('; ')}`;
  };

  const authenticate = async (token: string) => {
    state = 'authenticating';
    clearTimeout(authTimer);
    try {
      terminalSessionId = query.data.terminalSessionId;
      const target: TerminalTarget =
        deps.target === 'session'
          ? await deps.tokens.authenticateSession({ sessionId: setupSessionId, terminalSessionId, token })
          : (await deps.tokens.authenticate({ setupSessionId, terminalSessionId, token })).session;
      if (state !== 'authenticating') return; // the client went away meanwhile
      const shell = await deps.hub.attach(target, viewer, pendingSize ?? size);
      if (state !== 'authenticating') {
        shell.detach();
        return;
      }
      attached = shell;
      state = 'attached';
      heartbeat = setInterval(() => socket.ping(), HEARTBEAT_MS);
      heartbeat.unref();
      send({ type: 'ready', terminalSessionId, reattached: shell.reattached, replayBytes: shell.replay.length });
      if (shell.replay.length > 0) viewer.output(shell.replay);
      if (pendingSize && shell.reattached) shell.resize(pendingSize.cols, pendingSize.rows);
      for (const frame of queued.splice(0)) onMessage(frame.data, frame.isBinary);
    } catch (error) {
      if (error instanceof TerminalRefusal) return refuse(error.message);
      deps.log.error({ err: error, setupSessionId }, 'could not open the terminal');
      refuse(`the terminal could not be opened: ${(error as Error).message}`, TERMINAL_CLOSE_CODES.internal);
    }
  };

  const onMessage = (data: RawData, isBinary: boolean) => {
    if (state === 'closed') return;
    const length = byteLength(data);
    if (length > TERMINAL_MAX_FRAME_BYTES) {
      refuse(
        `a frame of ${length} bytes exceeds the limit of ${TERMINAL_MAX_FRAME_BYTES} bytes; send input in smaller pieces`,
        TERMINAL_CLOSE_CODES.tooBig,
      );
      return;
    }
    if (state === 'authenticating') {
      if (queued.length >= MAX_QUEUED_FRAMES) return refuse('too many frames before the terminal was ready');
      queued.push({ data, isBinary });
      return;
    }
    if (state === 'awaiting_auth') {
      const frame = parseFrame(data, isBinary);
      if (typeof frame === 'string') return refuse(`${frame}; the first frame must be {type:"auth", token}`);
      if (frame.type === 'resize') {
        pendingSize = { cols: frame.cols, rows: frame.rows };
        return;
      }
      if (frame.type !== 'auth') return refuse(`the first frame must be {type:"auth", token}, not {type:"${frame.type}"}`);
      authenticate(frame.token).catch((error: unknown) => {
        deps.log.error({ err: error, setupSessionId }, 'terminal authentication fault; closing the socket');
        socket.terminate();
      });
      return;
    }
    if (!attached) return;
    if (isBinary) {
      attached.write(toBuffer(data));
      return;
    }
    const frame = parseFrame(data, isBinary);
    if (typeof frame === 'string') {
      send({ type: 'error', message: frame });
      return;
    }
    switch (frame.type) {
      case 'input':
        attached.write(frame.data);
        return;
      case 'resize':
        attached.resize(frame.cols, frame.rows);
        return;
      case 'auth':
        send({ type: 'error', message: 'already authenticated' });
        return;
      default: {
        const never: never = frame;
        return never;
      }
    }
  };

  // A fault in one socket's handling closes that socket (1011) and is logged; it never reaches
  // the event loop, where it would end the server and every other terminal with it.
  const guard = connectionGuard((error, what) => {
    deps.log.error({ err: error, what, setupSessionId }, 'terminal socket fault; closing it');
    try {
      if (state !== 'closed') refuse('the terminal failed on the server; ask for a new token to reconnect', TERMINAL_CLOSE_CODES.internal);
    } finally {
      // The refusal itself could not be sent: cut the connection.
      if (socket.readyState === socket.OPEN) socket.terminate();
    }
  });
  socket.on('message', guard('message', onMessage));
  socket.on('error', () => undefined);
  socket.on(
    'close',
    guard('close', () => {
      const wasAttached = state === 'attached';
      state = 'closed';
      clearTimeout(authTimer);
      if (heartbeat) clearInterval(heartbeat);
      if (attached) {
        attached.detach();
        attached = null;
      }
      if (wasAttached && terminalSessionId) deps.tokens.markClosed(terminalSessionId, 'client_closed').catch(() => undefined);
    }),
  );
}
