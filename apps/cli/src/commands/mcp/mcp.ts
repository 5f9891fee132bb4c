import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { toolRefusalText } from '@sandcast/contracts';
import type { Command } from 'commander';
import { contextFrom } from '../../context.ts';

/**
 * `sandcast mcp --session ID`: an MCP server on stdin/stdout over one session's tools. It holds
 * no tool of its own: listing is `GET /api/sessions/:id/tools` and every call `POST
 * /api/sessions/:id/tools/:name` with this command's key, so the server's one tools table decides
 * what exists and what runs. A refusal is a tool error (`isError`) in the server's words.
 */
export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('serve a session’s tools to an MCP client over stdio (each call goes to the server with this key)')
    .requiredOption('--session <id>', 'the session whose tools to serve')
    .action(async (options: { session: string }, command: Command) => {
      const { client } = contextFrom(command);
      // Fails here, with the server's words on stderr, when the key may not use the session.
      await client.sessionTools.list(options.session);
      // The low-level server: the tools arrive as JSON Schema from the API, not as zod shapes.
      const server = new Server({ name: 'sandcast', version: '1' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await client.sessionTools.list(options.session) }));
      server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
        try {
          const result = await client.sessionTools.call(options.session, request.params.name, request.params.arguments ?? {});
          return { content: [{ type: 'text', text: JSON.stringify(result) }] };
        } catch (error) {
          return { isError: true, content: [{ type: 'text', text: toolRefusalText(error) }] };
        }
      });
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => {
        transport.onclose = resolve;
        process.stdin.once('end', resolve);
      });
      await server.connect(transport);
      await closed;
      await server.close();
    });
}
