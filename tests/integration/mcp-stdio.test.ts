import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { SandcastClient } from '@sandcast/client';
import { SESSION_TOOL_NAMES } from '@sandcast/contracts';
import { FLEET_NOT_OURS_MESSAGE } from '@sandcast/core';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './support/cli.ts';
import { adminOf, twoFleetSessions } from './support/fleet-flow.ts';
import { startTestServer, type TestServer } from './support/harness.ts';

const pglite = testDatabases().find((d) => d.kind === 'pglite')!;

type ToolAnswer = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const textOf = (answer: unknown) => (answer as ToolAnswer).content.map((c) => c.text ?? '').join('');
const jsonOf = (answer: unknown) => JSON.parse(textOf(answer)) as Record<string, unknown>;

/** `sandcast mcp --session ID` as an MCP client launches it: a child process on stdio. */
function stdioTransport(t: TestServer, key: string, sessionId: string) {
  return new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--session', sessionId],
    env: { ...(process.env as Record<string, string>), SANDCAST_URL: t.url, SANDCAST_API_KEY: key },
    stderr: 'pipe',
  });
}

// The CLI is a process of its own (a tsx start each time): more than the default 30 s on a busy machine.
describe('sandcast mcp over stdio, proxying to the REST API (fake provider)', { timeout: 120_000 }, () => {
  let t: TestServer;
  let admin: SandcastClient;
  beforeAll(async () => {
    t = await startTestServer({ database: pglite, mode: 'authenticated' });
    admin = await adminOf(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists the session’s tools and calls each; refusals are tool errors; another key’s session never starts', async () => {
    const { a, keyA, keyB, sessionA, sessionB } = await twoFleetSessions(t, admin, { name: 'mcp-stdio', provider: 'fake', config: {} });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(stdioTransport(t, keyA, sessionA.id));
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(SESSION_TOOL_NAMES);
      expect(jsonOf(await client.callTool({ name: 'exec', arguments: { command: ['echo', 'primary'] } }))).toMatchObject({
        stdout: 'primary\n',
      });
      await client.callTool({ name: 'write_file', arguments: { path: '/workspace/s.txt', content: 'stdio' } });
      expect(jsonOf(await client.callTool({ name: 'read_file', arguments: { path: '/workspace/s.txt' } }))).toMatchObject({
        content: 'stdio',
      });

      const rsb = jsonOf(await client.callTool({ name: 'sandbox_create', arguments: { use: 'extra' } })).id as string;
      expect(jsonOf(await client.callTool({ name: 'sandbox_list', arguments: {} }))).toMatchObject({ sandboxes: [{ id: rsb }] });
      expect(jsonOf(await client.callTool({ name: 'sandbox_inspect', arguments: { sandboxId: rsb } }))).toMatchObject({
        bindingName: 'extra',
      });
      expect(
        jsonOf(await client.callTool({ name: 'sandbox_exec', arguments: { sandboxId: rsb, command: ['echo', 'fleet'] } })),
      ).toMatchObject({
        stdout: 'fleet\n',
      });
      await client.callTool({ name: 'sandbox_write_file', arguments: { sandboxId: rsb, path: '/workspace/r.txt', content: 'r' } });
      expect(
        jsonOf(await client.callTool({ name: 'sandbox_read_file', arguments: { sandboxId: rsb, path: '/workspace/r.txt' } })),
      ).toMatchObject({
        content: 'r',
      });
      const checkpoint = await client.callTool({ name: 'sandbox_checkpoint', arguments: { sandboxId: rsb } });
      expect([checkpoint.isError, textOf(checkpoint)]).toEqual([true, expect.stringMatching(/^conflict: .*durability "checkpointed"/)]);
      expect(jsonOf(await client.callTool({ name: 'sandbox_manage', arguments: { sandboxId: rsb, action: 'delete' } }))).toMatchObject({
        observedState: 'deleted',
      });

      // Another session's sandbox, bad types, `..`, a huge argument, an unknown tool: tool errors, and the proxy lives on.
      const theirs = await admin.fleet.create(sessionB.id);
      const other = await client.callTool({ name: 'sandbox_exec', arguments: { sandboxId: theirs.id, command: ['true'] } });
      expect([other.isError, textOf(other)]).toEqual([true, `not_found: ${FLEET_NOT_OURS_MESSAGE}`]);
      for (const [name, args] of [
        ['sandbox_exec', { sandboxId: rsb, command: 42 }],
        ['read_file', { path: '/workspace/../../etc/passwd' }],
        ['exec', { command: ['echo', 'x'.repeat(70_000)] }],
        ['exec', { command: ['echo', 'a\0b'] }],
        ['no_such_tool', {}],
      ] as const) {
        expect((await client.callTool({ name, arguments: args as Record<string, unknown> })).isError, name).toBe(true);
      }
      expect(jsonOf(await client.callTool({ name: 'exec', arguments: { command: ['echo', 'still here'] } }))).toMatchObject({
        stdout: 'still here\n',
      });
      expect((await a.sessions.get(sessionA.id)).primarySandboxId).toBe(sessionA.primarySandboxId);
    } finally {
      await client.close();
    }

    // The other key's session: the command refuses before serving anything.
    const refused = new Client({ name: 'stdio-test', version: '1.0.0' });
    await expect(refused.connect(stdioTransport(t, keyB, sessionA.id))).rejects.toThrow();
    await refused.close().catch(() => undefined);
  });
});
