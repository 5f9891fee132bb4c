import { API_PATHS, MCP_SESSION_HEADER } from '@sandcast/contracts';
import { SandcastError } from '@sandcast/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SessionTools } from '../session-tools.ts';

const SESSION_ID = /^[A-Za-z0-9_-]{1,100}$/;

/** The MCP SDK, loaded on the first `/mcp` request: a server that never serves MCP never loads it. */
let sdk: Promise<[typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'), typeof import('../../mcp/tool-server.ts')]> | null =
  null;
const loadSdk = () => {
  sdk ??= Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('../../mcp/tool-server.ts')]);
  return sdk;
};

/** The session a request names, in the `Sandcast-Session` header. */
function sessionOf(request: FastifyRequest): string {
  const value = request.headers[MCP_SESSION_HEADER];
  if (typeof value !== 'string' || !SESSION_ID.test(value)) {
    throw new SandcastError(
      'bad_request',
      `name the session whose tools to serve in the ${MCP_SESSION_HEADER} header (one session id, e.g. ses_…); GET /api/sessions lists yours`,
    );
  }
  return value;
}

/**
 * The MCP server over streamable HTTP, stateless: each POST carries its JSON-RPC message, the key
 * in `Authorization` and the session in `Sandcast-Session`; the answer is JSON. It lists the tools
 * that session may use now (the fleet's only when its agent has `sandbox_fleet`) and runs them
 * through the one tools table. Another key's session is 404 before any MCP exchange.
 */
export function registerMcpRoutes(app: FastifyInstance, deps: { sessionTools: SessionTools }): void {
  const config = { access: 'agent', feature: 'environments' } as const;

  app.post(API_PATHS.mcp, { config }, async (request, reply) => {
    const sessionId = sessionOf(request);
    const actor = request.principal!;
    await deps.sessionTools.available(sessionId, actor);
    const [{ StreamableHTTPServerTransport }, { createToolServer }] = await loadSdk();
    const server = createToolServer(
      {
        list: () => deps.sessionTools.list(sessionId, actor),
        call: (name, input) => deps.sessionTools.call(sessionId, name, input, actor),
      },
      (error) => request.log.warn({ err: error }, 'an MCP tool call failed unexpectedly'),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  // Stateless: no server-initiated stream to open and no MCP session to end.
  const notHere = async () => {
    throw new SandcastError('method_not_allowed', 'this MCP server is stateless: send each JSON-RPC message as a POST to /mcp');
  };
  app.get(API_PATHS.mcp, { config }, notHere);
  app.delete(API_PATHS.mcp, { config }, notHere);
}
