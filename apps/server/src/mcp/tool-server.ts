import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type SessionToolList, toolRefusalText } from '@sandcast/contracts';
import { SANDCAST_VERSION } from '../version.ts';

/** What a tool server serves: the session's tools and a way to run one. */
interface ToolSource {
  list(): Promise<SessionToolList>;
  call(name: string, input: unknown): Promise<unknown>;
}

/**
 * One MCP server over a session's tools, on the SDK's low-level `Server` (the tools come as JSON
 * Schema from the one table, not as zod shapes). `/mcp` serves it over streamable HTTP with the
 * table in process (`sandcast mcp` is the same over stdio, with the table behind the REST API).
 * A refused or failing call is a tool error (`isError`), never a protocol error or a crash.
 */
export function createToolServer(source: ToolSource, onUnexpected?: (error: unknown) => void): Server {
  // The low-level server: tools arrive as JSON Schema, which the high-level one does not take.
  const server = new Server({ name: 'sandcast', version: SANDCAST_VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => source.list());
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    try {
      const result = await source.call(request.params.name, request.params.arguments ?? {});
      return { content: [{ type: 'text', text: JSON.stringify(result) }] };
    } catch (error) {
      if (!(error && typeof error === 'object' && 'code' in error)) onUnexpected?.(error);
      return { isError: true, content: [{ type: 'text', text: toolRefusalText(error) }] };
    }
  });
  return server;
}
