import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandcastClient } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider, type FakeProvider } from '@sandcast/provider-fake';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

/**
 * A running sandbox's read-and-touch answered from memory for a second (ADR 0033), and the bearer
 * key's lookup likewise: what this server writes is seen by its very next request, what another
 * server sharing the database writes within the second, and a command sent meanwhile to compute
 * that went away answers what the row now says — a 409, never a 5xx, and never run twice.
 */

/** The fake with its execs counted, so a refused command is seen not to have run. */
function counted(fake: FakeProvider) {
  const calls = { exec: 0 };
  const provider: SandboxProvider = {
    ...fake,
    exec: (...args: Parameters<FakeProvider['exec']>) => {
      calls.exec++;
      return fake.exec(...args);
    },
  };
  return { provider, calls };
}

const run = (client: SandcastClient, id: string) => client.sandboxes.exec(id, { command: ['true'] });

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`running sandboxes from memory [${database.kind}]`, () => {
    let dataDir: string;
    let probe: ReturnType<typeof counted>;
    let a: TestServer;
    let b: TestServer;
    let environmentId: string;

    beforeAll(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-running-'));
      probe = counted(createFakeProvider({ dataDir }));
      const [storeA, storeB] = await database.openShared();
      const env = { SANDCAST_RECONCILE_INTERVAL_SECONDS: '3600' };
      a = await startTestServer({ database, store: storeA, providers: [probe.provider], env, mode: 'authenticated' });
      b = await startTestServer({ database, store: storeB, providers: [probe.provider], env, mode: 'authenticated' });
    }, 60_000);

    afterAll(async () => {
      await a?.close();
      await b?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    }, 60_000);

    let adminKey = '';
    let admin: { a: SandcastClient; b: SandcastClient };
    let agentKey: { id: string; secret: string };

    it('sets up: an admin and an agent key, and an environment', async () => {
      adminKey = (await readFile(path.join(a.dataDir, 'admin-api-key'), 'utf8')).trim();
      admin = { a: a.clientWithKey(adminKey), b: b.clientWithKey(adminKey) };
      await enableEnvironments(admin.a);
      environmentId = (await admin.a.environments.create({ name: 'from-memory', provider: 'fake', config: {} })).id;
      const created = await admin.a.keys.create({ name: 'agent', role: 'agent' });
      agentKey = { id: created.key.id, secret: created.secret };
    });

    it('a stop through this server is seen by the next exec: 409 stopped, and the command never reaches the provider', async () => {
      const sandbox = await admin.a.sandboxes.create({ environmentId });
      await run(admin.a, sandbox.id);
      await run(admin.a, sandbox.id);
      await admin.a.sandboxes.stop(sandbox.id);
      const before = probe.calls.exec;
      const refused = await a.fetch(`/api/sandboxes/${sandbox.id}/exec`, execRequest(adminKey));
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ error: { code: 'conflict', details: { status: 'stopped' } } });
      expect(probe.calls.exec).toBe(before);
    });

    it("another server's stop within the second: the exec reaches stopped compute, and answers 409 stopped, not a 5xx", async () => {
      const sandbox = await admin.a.sandboxes.create({ environmentId });
      await run(admin.a, sandbox.id);
      await admin.b.sandboxes.stop(sandbox.id);
      const refused = await a.fetch(`/api/sandboxes/${sandbox.id}/exec`, execRequest(adminKey));
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ error: { code: 'conflict', details: { status: 'stopped' } } });
      // Started again through the other server, the first server's next exec runs there.
      await admin.b.sandboxes.start(sandbox.id);
      expect((await run(admin.a, sandbox.id)).exitCode).toBe(0);
    });

    it("another server's delete within the second answers what the row says, never a 5xx", async () => {
      const sandbox = await admin.a.sandboxes.create({ environmentId });
      await run(admin.a, sandbox.id);
      await admin.b.sandboxes.delete(sandbox.id);
      const refused = await a.fetch(`/api/sandboxes/${sandbox.id}/exec`, execRequest(adminKey));
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(refused.status).toBeLessThan(500);
    });

    it('an agent key reaches only its own sandboxes from memory too', async () => {
      const env = await admin.a.environments.get(environmentId);
      const sessionAgent = await admin.a.agents.create({
        name: 'from-memory',
        sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
      });
      await admin.a.keys.setAllowedAgents(agentKey.id, [sessionAgent.id]);
      const agent = a.clientWithKey(agentKey.secret);
      const session = await agent.sessions.start({ agentId: sessionAgent.id });
      const own = { id: (await agent.sessions.sandbox(session.id)).sandboxId };
      await run(agent, own.id);
      const other = await admin.a.sandboxes.create({ environmentId });
      await run(admin.a, other.id);
      // The admin's sandbox is remembered as running; the agent key still may not use it.
      const refused = await a.fetch(`/api/sandboxes/${other.id}/exec`, execRequest(agentKey.secret));
      expect(refused.status).toBe(403);
      expect((await run(agent, own.id)).exitCode).toBe(0);
    });

    it('a key revoked through this server is refused on its next request; through another, within the second', async () => {
      const local = await admin.a.keys.create({ name: 'revoked-here', role: 'agent' });
      const remote = await admin.a.keys.create({ name: 'revoked-there', role: 'agent' });
      for (const key of [local, remote]) {
        expect((await a.fetch('/api/agents', { headers: { authorization: `Bearer ${key.secret}` } })).status).toBe(200);
      }
      await admin.a.keys.revoke(local.key.id);
      expect((await a.fetch('/api/agents', { headers: { authorization: `Bearer ${local.secret}` } })).status).toBe(401);
      await admin.b.keys.revoke(remote.key.id);
      await sleep(1050);
      expect((await a.fetch('/api/agents', { headers: { authorization: `Bearer ${remote.secret}` } })).status).toBe(401);
    });
  });
}

function execRequest(secret: string): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ command: ['true'] }),
  };
}
