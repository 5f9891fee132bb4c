import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { SandcastClient } from '@sandcast/client';
import { MCP_SESSION_HEADER, SESSION_TOOL_NAMES } from '@sandcast/contracts';
import { FLEET_NOT_OURS_MESSAGE } from '@sandcast/core';
import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider } from '@sandcast/provider-fake';
import { createMovableClock } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf, refused, runFleetFlow, twoFleetSessions } from './support/fleet-flow.ts';
import { startTestServer, type TestServer } from './support/harness.ts';

type ToolAnswer = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const textOf = (answer: unknown) => (answer as ToolAnswer).content.map((c) => c.text ?? '').join('');
const jsonOf = (answer: unknown) => JSON.parse(textOf(answer)) as Record<string, unknown>;

/** An MCP client of the SDK on `/mcp`, for one session and one key. */
async function mcpClient(t: TestServer, key: string, sessionId: string): Promise<Client> {
  const client = new Client({ name: 'fleet-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', t.url), {
    requestInit: { headers: { authorization: `Bearer ${key}`, [MCP_SESSION_HEADER]: sessionId } },
  });
  await client.connect(transport);
  return client;
}

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`fleet tools over REST and MCP on the fake provider [${database.kind}]`, () => {
    let t: TestServer;
    let admin: SandcastClient;
    const clock = createMovableClock();

    beforeAll(async () => {
      t = await startTestServer({
        database,
        clock,
        mode: 'authenticated',
        providers: (dataDir) => [
          createFakeProvider({ dataDir }),
          createFakeProvider({ dataDir, id: 'fake-durable', capabilities: { durabilities: ['none', 'checkpointed'] } }),
        ],
      });
      admin = await adminOf(t);
    });
    afterAll(async () => {
      await t?.close();
    });

    it('isolates two sessions of two agent keys, never moves the primary, and ends with the session', async () => {
      await runFleetFlow({ t, admin, provider: t.server.providers.get('fake')!.provider, name: 'fleet-fake', config: {} });
    });

    it('refuses creations past the session limits with 409 naming the limit, and counts deletions back', async () => {
      const { a, sessionA, b, sessionB } = await twoFleetSessions(t, admin, {
        name: 'fleet-limits',
        provider: 'fake',
        config: { cpu: 2, memoryMb: 512 },
      });
      await admin.settings.update({ fleet: { maxSandboxesPerSession: 2, maxCpusPerSession: 100, maxMemoryMbPerSession: 100_000 } });
      try {
        const first = await a.fleet.create(sessionA.id);
        await a.fleet.create(sessionA.id);
        const count = await refused(a.fleet.create(sessionA.id));
        expect([count.status, count.code]).toEqual([409, 'conflict']);
        expect(count.details).toMatchObject({ reason: 'fleet_limit', limit: 'fleet.maxSandboxesPerSession', max: 2, value: 3 });
        expect(count.message).toContain('fleet.maxSandboxesPerSession');
        // The refused one left nothing behind; another session has its own count.
        expect(await a.fleet.list(sessionA.id)).toHaveLength(2);
        await b.fleet.create(sessionB.id);
        // A deleted one no longer counts.
        await a.fleet.manage(sessionA.id, first.id, { action: 'delete' });
        await a.fleet.create(sessionA.id);

        await admin.settings.update({ fleet: { maxSandboxesPerSession: 10, maxCpusPerSession: 3 } });
        const cpu = await refused(b.fleet.create(sessionB.id));
        expect(cpu.status).toBe(409);
        expect(cpu.details).toMatchObject({ reason: 'fleet_limit', limit: 'fleet.maxCpusPerSession', max: 3, value: 4 });
        await admin.settings.update({ fleet: { maxCpusPerSession: 100, maxMemoryMbPerSession: 1000 } });
        const memory = await refused(b.fleet.create(sessionB.id));
        expect(memory.details).toMatchObject({ limit: 'fleet.maxMemoryMbPerSession', max: 1000, value: 1024 });
      } finally {
        await admin.settings.update({ fleet: { maxSandboxesPerSession: 5, maxCpusPerSession: 8, maxMemoryMbPerSession: 16384 } });
        await a.sessions.end(sessionA.id);
        await b.sessions.end(sessionB.id);
      }
    });

    it('holds the count limit against concurrent creations in one session', async () => {
      const { a, sessionA } = await twoFleetSessions(t, admin, { name: 'fleet-race', provider: 'fake', config: {} });
      await admin.settings.update({ fleet: { maxSandboxesPerSession: 1 } });
      try {
        const outcomes = await Promise.allSettled([1, 2, 3, 4].map(() => a.fleet.create(sessionA.id)));
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as { status: number }).status).toBe(409);
        expect(await a.fleet.list(sessionA.id)).toHaveLength(1);
      } finally {
        await admin.settings.update({ fleet: { maxSandboxesPerSession: 5 } });
        await a.sessions.end(sessionA.id);
      }
    });

    it('refuses fleet tools without sandbox_fleet; checkpoints and restores a checkpointed resource sandbox', async () => {
      const env = await admin.environments.create({
        name: 'fleet-durable',
        provider: 'fake-durable',
        config: {},
        spec: { durability: 'checkpointed' },
      });
      const plain = await admin.agents.create({
        name: 'no-fleet',
        sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
      });
      const session = await admin.sessions.start({ agentId: plain.id });
      const noFleet = await refused(admin.fleet.create(session.id));
      expect([noFleet.status, noFleet.details?.reason]).toEqual([403, 'no_fleet_capability']);
      expect((await admin.sessionTools.list(session.id)).map((tool) => tool.name)).toEqual(['exec', 'read_file', 'write_file']);
      expect((await refused(admin.sessionTools.call(session.id, 'sandbox_list', {}))).status).toBe(403);

      await admin.agents.update(plain.id, { capabilities: ['sandbox_fleet'] });
      const fleetSession = await admin.sessions.start({ agentId: plain.id });
      expect((await admin.sessionTools.list(fleetSession.id)).map((tool) => tool.name)).toEqual(SESSION_TOOL_NAMES);
      const durable = await admin.fleet.create(fleetSession.id, { use: 'fleet-durable' });
      expect(durable).toMatchObject({ bindingName: 'main', durability: 'checkpointed', observedState: 'running', lastCheckpointId: null });
      // Writes through the fleet are checkpointed before they answer; a manual one and a restore go back in time.
      await admin.fleet.writeFile(fleetSession.id, durable.id, '/workspace/state.txt', { content: 'one\n' });
      const auto = await admin.fleet.inspect(fleetSession.id, durable.id);
      expect(auto.lastCheckpointId).toMatch(/^ckp_/);
      const manual = await admin.fleet.checkpoint(fleetSession.id, durable.id);
      expect(manual.checkpoint).toMatchObject({ trigger: 'manual', current: true });
      await admin.fleet.exec(fleetSession.id, durable.id, { command: ['sh', '-c', 'echo two > state.txt'] });
      expect((await admin.fleet.inspect(fleetSession.id, durable.id)).lastCheckpointId).not.toBe(manual.checkpoint.id);
      const restored = await admin.fleet.manage(fleetSession.id, durable.id, { action: 'restore', checkpointId: manual.checkpoint.id });
      expect(restored.lastCheckpointId).toBe(manual.checkpoint.id);
      expect((await admin.fleet.readFile(fleetSession.id, durable.id, '/workspace/state.txt')).content).toBe('one\n');
      const overview = await admin.fleet.overview();
      expect(overview.find((row) => row.logicalId === durable.id)?.lastCheckpointId).toBe(manual.checkpoint.id);
      // The primary's checkpoints are its own: the fleet's never became its current one.
      expect((await admin.sessions.sandbox(fleetSession.id)).currentCheckpointId).not.toBe(manual.checkpoint.id);

      // A second resource sandbox, for the foreign checkpoint below.
      const plainResource = await admin.fleet.create(fleetSession.id, { use: 'main' });
      // A sandbox without durability checkpointed keeps none.
      const ephemeralEnv = await admin.environments.create({ name: 'fleet-ephemeral', provider: 'fake', config: {} });
      const mixed = await admin.agents.create({
        name: 'fleet-mixed',
        capabilities: ['sandbox_fleet'],
        sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: ephemeralEnv.currentRevision.id } } },
      });
      const mixedSession = await admin.sessions.start({ agentId: mixed.id });
      const ephemeral = await admin.fleet.create(mixedSession.id);
      for (const attempt of [
        () => admin.fleet.checkpoint(mixedSession.id, ephemeral.id),
        () => admin.fleet.manage(mixedSession.id, ephemeral.id, { action: 'restore' }),
      ]) {
        const error = await refused(attempt());
        expect([error.status, error.details?.reason]).toEqual([409, 'not_checkpointed']);
        expect(error.message).toContain('checkpoints need durability "checkpointed"');
      }
      // Another sandbox's checkpoint is not this one's to restore.
      const foreign = await refused(
        admin.fleet.manage(fleetSession.id, plainResource.id, { action: 'restore', checkpointId: manual.checkpoint.id }),
      );
      expect(foreign.status).toBe(404);
      await admin.sessions.end(mixedSession.id);
      const unknownUse = await refused(admin.fleet.create(fleetSession.id, { use: 'nowhere' }));
      expect([unknownUse.status, unknownUse.details?.reason]).toEqual([422, 'unknown_binding']);
      await admin.sessions.end(session.id);
      await admin.sessions.end(fleetSession.id);
    });

    it('answers hostile REST input with a 4xx, never a 5xx', async () => {
      const { a, keyA: key, sessionA } = await twoFleetSessions(t, admin, { name: 'fleet-hostile', provider: 'fake', config: {} });
      const mine = await a.fleet.create(sessionA.id);
      const base = `/api/sessions/${sessionA.id}/fleet/sandboxes`;
      const call = (path: string, init: RequestInit = {}) =>
        t.fetch(path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } });
      const attempts: Array<[string, RequestInit | undefined, number]> = [
        [`${base}/${mine.id}/exec`, { method: 'POST', body: JSON.stringify({ command: 'echo hi' }) }, 400],
        [`${base}/${mine.id}/exec`, { method: 'POST', body: JSON.stringify({ command: ['echo', 'a\0b'] }) }, 400],
        [`${base}/${mine.id}/exec`, { method: 'POST', body: JSON.stringify({ command: ['echo', 'x'.repeat(70_000)] }) }, 400],
        [`${base}/${mine.id}/exec`, { method: 'POST', body: JSON.stringify({ command: ['true'], timeoutMs: 1e12 }) }, 400],
        [`${base}/${mine.id}/files?path=${encodeURIComponent('/workspace/../etc/passwd')}`, undefined, 400],
        [`${base}/${mine.id}/files?path=relative`, undefined, 400],
        [
          `${base}/${mine.id}/files?path=${encodeURIComponent('/workspace/a')}`,
          { method: 'PUT', body: JSON.stringify({ content: 5 }) },
          400,
        ],
        [
          `${base}/${mine.id}/files?path=${encodeURIComponent('/workspace/a')}`,
          { method: 'PUT', body: JSON.stringify({ content: '%%%', encoding: 'base64' }) },
          400,
        ],
        [
          `${base}/${mine.id}/files?path=${encodeURIComponent('/workspace/a')}`,
          { method: 'PUT', body: JSON.stringify({ content: 'x'.repeat(900_000) }) },
          413,
        ],
        [`${base}/${mine.id}/manage`, { method: 'POST', body: JSON.stringify({ action: 'explode' }) }, 400],
        // Longer than any route parameter: no route answers it.
        [`${base}/${'r'.repeat(300)}`, undefined, 404],
        [`${base}/rsb_nope/exec`, { method: 'POST', body: JSON.stringify({ command: ['true'] }) }, 404],
        [base, { method: 'POST', body: JSON.stringify({ use: 42 }) }, 400],
        [base, { method: 'POST', body: JSON.stringify({ use: 'main', extra: true }) }, 400],
        [
          `/api/sessions/${sessionA.id}/tools/sandbox_exec`,
          { method: 'POST', body: JSON.stringify({ sandboxId: mine.id, command: [] }) },
          400,
        ],
        [`/api/sessions/${sessionA.id}/tools/no_such_tool`, { method: 'POST', body: '{}' }, 404],
        [`/api/sessions/${sessionA.id}/tools/__proto__`, { method: 'POST', body: '{}' }, 404],
        [`/api/sessions/${sessionA.id}/tools/sandbox_exec`, { method: 'POST', body: '[1,2' }, 400],
      ];
      for (const [path, init, status] of attempts) {
        const answer = await call(path, init);
        expect(answer.status, `${init?.method ?? 'GET'} ${path.slice(0, 120)}: ${answer.text.slice(0, 200)}`).toBe(status);
      }
      const notOurs = await call(`${base}/rsb_nope`);
      expect(notOurs.body).toMatchObject({ error: { code: 'not_found', message: FLEET_NOT_OURS_MESSAGE } });
      // The sandbox still answers after all of it.
      expect((await a.fleet.exec(sessionA.id, mine.id, { command: ['echo', 'alive'] })).stdout).toBe('alive\n');
      await a.sessions.end(sessionA.id);
    });

    it('serves the tools over MCP streamable HTTP: lists per capability, calls each, refuses others’ sessions', async () => {
      const keys = await Promise.all(
        ['mcp one', 'mcp two'].map(async (name) => {
          const created = await admin.keys.create({ name, role: 'agent' });
          return created;
        }),
      );
      const env = await admin.environments.create({ name: 'fleet-mcp', provider: 'fake', config: {} });
      const agent = await admin.agents.create({
        name: 'fleet-mcp',
        capabilities: ['sandbox_fleet'],
        sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
      });
      const plainAgent = await admin.agents.create({
        name: 'plain-mcp',
        sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
      });
      for (const k of keys) await admin.keys.setAllowedAgents(k.key.id, [agent.id, plainAgent.id]);
      const one = t.clientWithKey(keys[0]!.secret);
      const session = await one.sessions.start({ agentId: agent.id });
      const plainSession = await one.sessions.start({ agentId: plainAgent.id });

      const mcp = await mcpClient(t, keys[0]!.secret, session.id);
      const listed = await mcp.listTools();
      expect(listed.tools.map((tool) => tool.name)).toEqual(SESSION_TOOL_NAMES);
      expect(listed.tools.find((tool) => tool.name === 'sandbox_exec')?.inputSchema).toMatchObject({
        type: 'object',
        required: expect.arrayContaining(['sandboxId', 'command']),
      });

      const primaryBefore = (await one.sessions.get(session.id)).primarySandboxId;
      expect(jsonOf(await mcp.callTool({ name: 'exec', arguments: { command: ['sh', '-c', 'echo primary'] } }))).toMatchObject({
        exitCode: 0,
        stdout: 'primary\n',
      });
      expect(await mcp.callTool({ name: 'write_file', arguments: { path: '/workspace/p.txt', content: 'p' } })).not.toHaveProperty(
        'isError',
        true,
      );
      expect(jsonOf(await mcp.callTool({ name: 'read_file', arguments: { path: '/workspace/p.txt' } }))).toMatchObject({ content: 'p' });
      const created = jsonOf(await mcp.callTool({ name: 'sandbox_create', arguments: {} }));
      const rsb = created.id as string;
      expect(rsb).toMatch(/^rsb_/);
      expect(jsonOf(await mcp.callTool({ name: 'sandbox_list', arguments: {} }))).toMatchObject({ sandboxes: [{ id: rsb }] });
      expect(jsonOf(await mcp.callTool({ name: 'sandbox_inspect', arguments: { sandboxId: rsb } }))).toMatchObject({
        observedState: 'running',
      });
      expect(jsonOf(await mcp.callTool({ name: 'sandbox_exec', arguments: { sandboxId: rsb, command: ['echo', 'fleet'] } }))).toMatchObject(
        {
          stdout: 'fleet\n',
        },
      );
      await mcp.callTool({
        name: 'sandbox_write_file',
        arguments: { sandboxId: rsb, path: '/workspace/f.txt', content: 'Zg==', encoding: 'base64' },
      });
      expect(
        jsonOf(await mcp.callTool({ name: 'sandbox_read_file', arguments: { sandboxId: rsb, path: '/workspace/f.txt' } })),
      ).toMatchObject({
        content: 'f',
      });
      const checkpoint = await mcp.callTool({ name: 'sandbox_checkpoint', arguments: { sandboxId: rsb } });
      expect(checkpoint.isError).toBe(true);
      expect(textOf(checkpoint)).toContain('conflict: ');
      expect(jsonOf(await mcp.callTool({ name: 'sandbox_manage', arguments: { sandboxId: rsb, action: 'stop' } }))).toMatchObject({
        observedState: 'stopped',
      });
      expect(jsonOf(await mcp.callTool({ name: 'sandbox_manage', arguments: { sandboxId: rsb, action: 'delete' } }))).toMatchObject({
        observedState: 'deleted',
      });
      expect((await one.sessions.get(session.id)).primarySandboxId).toBe(primaryBefore);

      // Bad input is a tool error, never a protocol error or a crash.
      for (const [name, args] of [
        ['sandbox_exec', { sandboxId: rsb, command: 'not an array' }],
        ['read_file', { path: '/workspace/../../etc/shadow' }],
        ['write_file', { path: '/workspace/big', content: 'x'.repeat(900_000) }],
        ['sandbox_inspect', { sandboxId: 7 }],
        ['sandbox_inspect', { sandboxId: rsb }],
        ['sandbox_manage', { sandboxId: rsb, action: 'explode' }],
        ['no_such_tool', {}],
        ['constructor', {}],
      ] as const) {
        const answer = await mcp.callTool({ name, arguments: args as Record<string, unknown> });
        expect(answer.isError, `${name} ${JSON.stringify(args).slice(0, 80)}`).toBe(true);
      }
      // A NUL anywhere in the JSON is refused at the HTTP edge (400) before MCP reads it.
      await expect(mcp.callTool({ name: 'sandbox_exec', arguments: { sandboxId: rsb, command: ['a\0b'] } })).rejects.toThrow(/NUL/);
      const gone = await mcp.callTool({ name: 'sandbox_inspect', arguments: { sandboxId: rsb } });
      expect(textOf(gone)).toBe(`not_found: ${FLEET_NOT_OURS_MESSAGE}`);
      await mcp.close();

      // A session without the capability lists no fleet tools.
      const plainMcp = await mcpClient(t, keys[0]!.secret, plainSession.id);
      expect((await plainMcp.listTools()).tools.map((tool) => tool.name)).toEqual(['exec', 'read_file', 'write_file']);
      expect((await plainMcp.callTool({ name: 'sandbox_list', arguments: {} })).isError).toBe(true);
      await plainMcp.close();

      // Another key's session, no session, a GET: refused over plain HTTP before any MCP exchange.
      await expect(mcpClient(t, keys[1]!.secret, session.id)).rejects.toThrow();
      const post = (headers: Record<string, string>) =>
        t.fetch('/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
      expect((await post({ authorization: `Bearer ${keys[1]!.secret}`, [MCP_SESSION_HEADER]: session.id })).status).toBe(404);
      expect((await post({ authorization: `Bearer ${keys[0]!.secret}` })).status).toBe(400);
      expect((await post({ [MCP_SESSION_HEADER]: session.id })).status).toBe(401);
      expect((await post({ authorization: `Bearer ${keys[0]!.secret}`, [MCP_SESSION_HEADER]: '../../etc' })).status).toBe(400);
      expect((await t.fetch('/mcp', { headers: { authorization: `Bearer ${keys[0]!.secret}` } })).status).toBe(405);
      await one.sessions.end(session.id);
      await one.sessions.end(plainSession.id);
    });

    it('lists every sandbox for the operator with flags computed on the server', async () => {
      const { a, sessionA } = await twoFleetSessions(t, admin, { name: 'fleet-overview', provider: 'fake', config: {} });
      const mine = await a.fleet.create(sessionA.id);
      const rows = await admin.fleet.overview();
      const primary = rows.find((row) => row.id === sessionA.primarySandboxId);
      expect(primary).toMatchObject({
        role: 'primary',
        session: { id: sessionA.id, status: 'active' },
        environment: { name: 'fleet-overview' },
      });
      expect(primary?.environmentRevisionNumber).toBe(1);
      const resource = rows.find((row) => row.logicalId === mine.id);
      expect(resource).toMatchObject({ role: 'resource', observedState: 'running', generation: 1, lastCheckpointId: null, attention: [] });
      // Agents may not read the operator's view.
      expect((await refused(a.fleet.overview())).status).toBe(403);
      await a.sessions.end(sessionA.id);
    });

    // Last: it moves the server's clock past every idle window.
    it('idles like the primary, and the reconciler removes what an ended session left behind', async () => {
      const { a, sessionA } = await twoFleetSessions(t, admin, { name: 'fleet-idle', provider: 'fake', config: {} });
      const mine = await a.fleet.create(sessionA.id);
      clock.advance(181_000);
      const flagged = (await admin.fleet.overview()).find((row) => row.logicalId === mine.id);
      expect(flagged?.attention).toEqual(['idle_running']);
      await t.server.reconciler.runOnce();
      expect((await a.fleet.inspect(sessionA.id, mine.id)).observedState).toBe('stopped');
      expect((await a.sessions.sandbox(sessionA.id)).observedState).toBe('stopped');
      expect((await a.fleet.manage(sessionA.id, mine.id, { action: 'start' })).observedState).toBe('running');

      // A server that died between ending the session and its teardown: the records say ended, the compute is there.
      await t.server.store.repos.sessions.end(sessionA.id, clock.now());
      const sandboxId = (await admin.fleet.overview()).find((row) => row.logicalId === mine.id)!.id;
      expect((await admin.fleet.overview()).find((row) => row.id === sandboxId)?.attention).toContain('cleanup_failed');
      await t.server.reconciler.runOnce();
      const fake = t.server.providers.get('fake')!.provider;
      expect((await fake.listInstances()).some((i) => i.ownerId === sandboxId)).toBe(false);
      expect((await admin.fleet.overview({ includeDeleted: true })).find((row) => row.id === sandboxId)).toMatchObject({
        observedState: 'deleted',
        attention: [],
      });
    });
  });
}
