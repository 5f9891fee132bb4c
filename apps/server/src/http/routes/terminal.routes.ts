import websocket from '@fastify/websocket';
import { API_PATHS, TERMINAL_CLOSE_CODES, type TerminalServerFrame } from '@sandcast/contracts';
import { SandcastError } from '@sandcast/core';
import type { FastifyInstance } from 'fastify';
import type { SessionsService } from '../../services/sessions/sessions.service.ts';
import type { TerminalHub } from '../../terminal/terminal-hub.ts';
import { handleTerminalSocket } from '../../terminal/terminal-socket.ts';
import type { TerminalTokensService } from '../../terminal/terminal-tokens.service.ts';

/** The protocol bound is TERMINAL_MAX_FRAME_BYTES (answered with an error frame); this is the hard stop. */
const WS_MAX_PAYLOAD_BYTES = 1024 * 1024;

type SessionParams = { sessionId: string };

export function registerTerminalRoutes(
  app: FastifyInstance,
  deps: { terminalTokens: TerminalTokensService; terminalHub: TerminalHub; sessions: SessionsService; authTimeoutMs: number },
): void {
  app.post<{ Params: SessionParams }>(
    API_PATHS.terminalSessionToken,
    { config: { access: 'admin', feature: 'environments' } },
    async (request, reply) => reply.status(201).send(await deps.terminalTokens.issue(request.params.sessionId, request.principal!)),
  );

  // A session's primary sandbox: the same terminal, reached by session id (agent keys for their own sessions).
  app.post<{ Params: { id: string } }>(
    API_PATHS.sessionPtyToken,
    { config: { access: 'agent', feature: 'environments' } },
    async (request, reply) => {
      const sandbox = await deps.sessions.useSandbox(request.params.id, request.principal!);
      const session = await deps.sessions.requireSession(request.params.id, request.principal!);
      return reply.status(201).send(await deps.terminalTokens.issueForSession(session, sandbox, request.principal!));
    },
  );

  app.register(websocket, {
    options: { maxPayload: WS_MAX_PAYLOAD_BYTES, perMessageDeflate: false },
    // Shutdown: attached terminals are told `server_shutdown`; sockets still authenticating too.
    preClose(done) {
      deps.terminalHub.closeAll();
      const shutdown: TerminalServerFrame = { type: 'closed', reason: 'server_shutdown' };
      for (const client of app.websocketServer.clients) {
        if (client.readyState !== client.OPEN) continue;
        client.send(JSON.stringify(shutdown));
        client.close(TERMINAL_CLOSE_CODES.goingAway, 'server_shutdown');
        setTimeout(() => client.terminate(), 2000).unref();
      }
      app.websocketServer.close(() => done());
    },
  });
  app.register(async (scoped) => {
    // Access is `public` at the HTTP layer on purpose: browsers cannot put an Authorization header
    // on a WebSocket and a credential in the URL would leak into logs. The single-use token in the
    // first frame is the credential; handleTerminalSocket refuses everything before it.
    const sockets = [
      { url: API_PATHS.terminalSocket, tokenRoute: 'POST …/terminal-session-token', target: 'setup' },
      { url: API_PATHS.sessionTerminalSocket, tokenRoute: 'POST /api/sessions/:id/pty-token', target: 'session' },
    ] as const;
    for (const socket of sockets) {
      scoped.route<{ Params: { sessionId?: string; id?: string } }>({
        method: 'GET',
        url: socket.url,
        config: { access: 'public' },
        // A plain GET (no Upgrade header) gets the error envelope rather than an empty 404.
        handler: async () => {
          throw new SandcastError(
            'bad_request',
            `this is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket) using the websocketPath from ${socket.tokenRoute}`,
          );
        },
        wsHandler: (ws, request) =>
          handleTerminalSocket(ws, request, {
            hub: deps.terminalHub,
            tokens: deps.terminalTokens,
            log: request.log,
            authTimeoutMs: deps.authTimeoutMs,
            target: socket.target,
          }),
      });
    }
  });
}
