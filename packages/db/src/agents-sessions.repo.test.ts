import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from './connect.ts';
import { isUniqueViolation } from './errors.ts';
import type { Repositories } from './store.ts';
import { useEnvironmentFixture } from './testing/fixtures.ts';
import { testDatabases } from './testing/test-databases.ts';

const policy = (revisionId: string) => ({
  mode: 'fixed' as const,
  default: 'main',
  bindings: { main: { environmentRevisionId: revisionId } },
});

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`agents, sessions, leases and sandbox fencing [${database.kind}]`, () => {
    const fixture = useEnvironmentFixture(database, 'base');
    let raw: Database;
    let repos: Repositories;
    let revisionId: string;
    beforeAll(() => {
      raw = fixture.raw();
      repos = fixture.repos();
      revisionId = fixture.revisionId();
    });
    const newSandbox = fixture.newSandbox;

    describe('agents', () => {
      it('inserts version 1, refuses a duplicate name, makes version N+1 for a policy change only', async () => {
        const agent = await repos.agents.insert({
          name: 'one',
          displayName: null,
          description: null,
          sandboxPolicy: policy(revisionId),
          capabilities: [],
        });
        expect(agent.currentVersion.number).toBe(1);
        const duplicate = await repos.agents
          .insert({ name: 'one', displayName: null, description: null, sandboxPolicy: policy(revisionId), capabilities: [] })
          .catch((e: unknown) => e);
        expect(isUniqueViolation(duplicate, 'agents_name_key')).toBe(true);

        const renamed = await repos.agents.update(agent.id, { displayName: 'One', expectedVersionId: agent.currentVersion.id });
        expect(renamed).toMatchObject({ newVersion: false, agent: { displayName: 'One', currentVersion: { number: 1 } } });
        const moved = await repos.agents.update(agent.id, { capabilities: ['sandbox_fleet'], expectedVersionId: agent.currentVersion.id });
        expect(moved?.agent.currentVersion).toMatchObject({ number: 2, capabilities: ['sandbox_fleet'] });
        // A stale version is a lost compare-and-set.
        expect(await repos.agents.update(agent.id, { capabilities: [], expectedVersionId: agent.currentVersion.id })).toBeNull();
        expect((await repos.agents.versions(agent.id)).map((v) => v.number)).toEqual([2, 1]);

        const archived = await repos.agents.archive(agent.id, new Date());
        expect(archived?.archivedAt).not.toBeNull();
        expect(await repos.agents.archive(agent.id, new Date())).toBeNull();
        expect((await repos.agents.list()).some((a) => a.id === agent.id)).toBe(false);
        expect((await repos.agents.list({ includeArchived: true })).some((a) => a.id === agent.id)).toBe(true);
      });

      it('the database refuses to rewrite an agent version', async () => {
        const agent = await repos.agents.insert({
          name: 'frozen',
          displayName: null,
          description: null,
          sandboxPolicy: policy(revisionId),
          capabilities: [],
        });
        const rewrite = await raw.db
          .execute(sql`UPDATE agent_versions SET capabilities = '["sandbox_fleet"]'::jsonb WHERE id = ${agent.currentVersion.id}`)
          .catch((e: unknown) => e);
        expect(rewrite).toBeInstanceOf(Error);
        expect(String((rewrite as Error).cause ?? rewrite)).toMatch(/immutable/);
        expect((await repos.agents.getVersion(agent.currentVersion.id))?.capabilities).toEqual([]);
      });
    });

    describe('sessions', () => {
      it('insert, primary sandbox, list by key, end once', async () => {
        const agent = await repos.agents.insert({
          name: 'runner',
          displayName: null,
          description: null,
          sandboxPolicy: policy(revisionId),
          capabilities: [],
        });
        const key = await repos.apiKeys.insert({ name: 'k', role: 'agent', keyHash: 'h-sessions', prefix: 'sc_x' });
        const mine = await repos.sessions.insert({
          agentId: agent.id,
          agentVersionId: agent.currentVersion.id,
          bindingName: 'main',
          createdByRole: 'agent',
          createdByKeyId: key.id,
        });
        const admins = await repos.sessions.insert({
          agentId: agent.id,
          agentVersionId: agent.currentVersion.id,
          bindingName: null,
          createdByRole: 'admin',
          createdByKeyId: null,
        });
        expect(mine.status).toBe('active');
        const sandbox = await newSandbox();
        expect((await repos.sessions.setPrimarySandbox(mine.id, sandbox.id))?.primarySandboxId).toBe(sandbox.id);
        expect((await repos.sessions.list({ createdByKeyId: key.id })).map((s) => s.id)).toEqual([mine.id]);
        expect((await repos.sessions.list({ agentId: agent.id })).map((s) => s.id).sort()).toEqual([mine.id, admins.id].sort());

        const ended = await repos.sessions.end(mine.id, new Date());
        expect(ended?.status).toBe('ended');
        expect(ended?.endedAt).not.toBeNull();
        expect(await repos.sessions.end(mine.id, new Date())).toBeNull();
        expect(await repos.sessions.end('ses_missing', new Date())).toBeNull();
      });
    });

    describe('leader leases', () => {
      it('two holders: one acquires; the holder renews; expiry lets the other take it; release frees it', async () => {
        const t0 = new Date('2030-01-01T00:00:00Z');
        const at = (ms: number) => new Date(t0.getTime() + ms);
        const [a, b] = await Promise.all([
          repos.leaderLeases.acquire('reconciler', 'a', 10_000, t0),
          repos.leaderLeases.acquire('reconciler', 'b', 10_000, t0),
        ]);
        expect([a, b].filter(Boolean)).toHaveLength(1);
        const holder = a ? 'a' : 'b';
        const other = a ? 'b' : 'a';
        expect(await repos.leaderLeases.acquire('reconciler', holder, 10_000, at(5_000))).toBe(true);
        // Renewed until 15 s: at 12 s the other still cannot take it.
        expect(await repos.leaderLeases.acquire('reconciler', other, 10_000, at(12_000))).toBe(false);
        expect(await repos.leaderLeases.acquire('reconciler', other, 10_000, at(16_000))).toBe(true);
        expect(await repos.leaderLeases.acquire('reconciler', holder, 10_000, at(17_000))).toBe(false);
        await repos.leaderLeases.release('reconciler', other);
        expect(await repos.leaderLeases.acquire('reconciler', holder, 10_000, at(18_000))).toBe(true);
        // Another lease name is independent.
        expect(await repos.leaderLeases.acquire('other-work', other, 10_000, at(18_000))).toBe(true);
      });
    });

    describe('sandbox fencing', () => {
      it('a write guarded by a stale generation or status changes nothing', async () => {
        const sandbox = await newSandbox();
        const running = await repos.sandboxes.update(sandbox.id, { status: 'running', providerInstanceId: 'i-1' }, { generation: 1 });
        expect(running).toMatchObject({ status: 'running', generation: 1 });
        expect(await repos.sandboxes.update(sandbox.id, { status: 'stopped' }, { generation: 2 })).toBeNull();
        expect(await repos.sandboxes.update(sandbox.id, { failureReason: 'x' }, { statuses: ['stopped'] })).toBeNull();
        expect((await repos.sandboxes.get(sandbox.id))?.status).toBe('running');
        await expect(repos.sandboxes.update(sandbox.id, { status: 'starting' })).rejects.toThrow();
      });

      it('bumpGeneration racing: exactly one winner; the loser cannot write with the old generation', async () => {
        const sandbox = await newSandbox();
        await repos.sandboxes.update(sandbox.id, { status: 'running', providerInstanceId: 'i-1' });
        await repos.sandboxes.update(sandbox.id, { status: 'lost' });
        const results = await Promise.all(Array.from({ length: 5 }, () => repos.sandboxes.bumpGeneration(sandbox.id, 1)));
        const winners = results.filter((r) => r !== null);
        expect(winners).toHaveLength(1);
        expect(winners[0]).toMatchObject({ generation: 2, status: 'starting', providerInstanceId: null });
        // Work started for generation 1 is fenced out.
        expect(await repos.sandboxes.update(sandbox.id, { status: 'running', providerInstanceId: 'old' }, { generation: 1 })).toBeNull();
        expect(await repos.sandboxes.update(sandbox.id, { status: 'running', providerInstanceId: 'new' }, { generation: 2 })).toMatchObject(
          {
            status: 'running',
            providerInstanceId: 'new',
          },
        );
      });

      it('touch records the last activity', async () => {
        const sandbox = await newSandbox();
        const at = new Date('2031-05-05T05:05:05Z');
        await repos.sandboxes.touch(sandbox.id, at);
        expect((await repos.sandboxes.get(sandbox.id))?.lastActivityAt).toBe(at.toISOString());
      });
    });

    describe('terminal targets', () => {
      it('a terminal record names exactly one target', async () => {
        const sandbox = await newSandbox();
        const record = await repos.terminalSessions.insert({
          sandboxId: sandbox.id,
          tokenHash: 'hash-terminal-target',
          connectionType: 'pty',
          connectExpiresAt: new Date(Date.now() + 60_000),
          sessionExpiresAt: null,
          createdByKeyId: null,
        });
        expect(record).toMatchObject({ sandboxId: sandbox.id, setupSessionId: null, sessionExpiresAt: null });
        const consumed = await repos.terminalSessions.consume({
          id: record.id,
          sandboxId: sandbox.id,
          tokenHash: 'hash-terminal-target',
          now: new Date(),
        });
        expect(consumed.ok).toBe(true);
        const neither = await raw.db
          .execute(
            sql`INSERT INTO terminal_sessions (id, token_hash, connection_type, connect_expires_at) VALUES ('term_neither', 'h-n', 'pty', now())`,
          )
          .catch((e: unknown) => e);
        expect(String((neither as Error).cause ?? neither)).toMatch(/terminal_sessions_one_target_check/);
      });
    });
  });
}
