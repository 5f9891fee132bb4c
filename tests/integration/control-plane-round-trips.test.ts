import { createStore, type Database } from '@sandcast/db';
import { testDatabases } from '@sandcast/db/testing';
import { CLAIM_TARGET_CACHE_MS } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

/**
 * The database statements a request sends on the fake provider (so only the control plane's own
 * work is counted), pinned: a change that adds a round trip to exec or to a claim fails here and
 * says which statement is new. Issue 16, ADR 0032.
 */

/** A transaction's frame, which only some drivers report. */
const FRAME = /^\s*(begin|commit|rollback|savepoint|release)\b/i;
/** The settings row: read at most once a second per server, so not part of a request's pinned list. */
const SETTINGS = /from "instance_settings"/;

/**
 * `insert into "activity"`, `update "sandboxes"`, `select … from "environments"`: the statement's
 * verb and table; a statement of data-modifying CTEs lists each write, `with update sandboxes,
 * insert activity`.
 */
function shape(sql: string): string {
  if (/^\s*with\b/i.test(sql)) {
    const writes = [...sql.matchAll(/\bas \(\s*(update|insert into) "?(\w+)"?/gi)].map(
      (m) => `${m[1]!.toLowerCase().replace(' into', '')} ${m[2]}`,
    );
    return `with ${writes.join(', ')}`;
  }
  const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toLowerCase() ?? '?';
  const table = (verb === 'select' ? / from "(\w+)"/ : /^\s*(?:insert into|update|delete from) "(\w+)"/i).exec(sql)?.[1] ?? '?';
  return `${verb} ${table}`;
}

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`control-plane round trips [${database.kind}]`, () => {
    let t: TestServer;
    let db: Database;
    beforeAll(async () => {
      db = await database.openDatabase();
      // Passes are run by the tests; the timer never fires during a test. The refill after a claim
      // waits long enough that its statements never land inside a counted request.
      t = await startTestServer({
        database,
        store: createStore(db),
        env: { SANDCAST_RECONCILE_INTERVAL_SECONDS: '3600' },
        refillDelayMs: 1500,
      });
      await enableEnvironments(t.client);
      // The pass a start runs in the background finishes before anything is counted.
      await t.server.reconciler.runOnce();
    });
    afterAll(async () => {
      await t?.close();
    });

    /** What `call` sends while it runs: the statements' shapes, settings reads counted apart. */
    const sent = async (call: () => Promise<unknown>) => {
      const statements: string[] = [];
      let settingsReads = 0;
      const stop = db.onQuery((sql) => {
        if (FRAME.test(sql)) return;
        if (SETTINGS.test(sql)) settingsReads++;
        else statements.push(shape(sql));
      });
      try {
        await call();
      } finally {
        stop();
      }
      return { statements, settingsReads };
    };

    it('an exec in a running sandbox is one statement, the read and the activity touch together, and none for a second after', async () => {
      const env = await t.client.environments.create({ name: 'round-trips', provider: 'fake', config: {} });
      const sandbox = await t.client.sandboxes.create({ environmentId: env.id });
      // Just made running, the sandbox's first command needs no statement (ADR 0033).
      const first = await sent(() => t.client.sandboxes.exec(sandbox.id, { command: ['true'] }));
      expect(first.statements).toEqual([]);
      const before = (await t.server.store.repos.sandboxes.get(sandbox.id))!.lastActivityAt;
      await new Promise((resolve) => setTimeout(resolve, 1050));
      const one = await sent(() => t.client.sandboxes.exec(sandbox.id, { command: ['true'] }));
      expect(one.statements).toEqual(['update sandboxes']);
      // …and it did touch: the idle policy counts from it.
      expect((await t.server.store.repos.sandboxes.get(sandbox.id))!.lastActivityAt > before).toBe(true);
      // Back to back, the read-and-touch is answered from memory for a second, and the settings
      // row (the feature gate) is read at most once a second, not per request.
      const started = performance.now();
      const five = await sent(async () => {
        for (let i = 0; i < 5; i++) await t.client.sandboxes.exec(sandbox.id, { command: ['true'] });
      });
      const seconds = (performance.now() - started) / 1000;
      expect(five.statements.every((statement) => statement === 'update sandboxes')).toBe(true);
      expect(five.statements.length).toBeLessThanOrEqual(Math.floor(seconds) + 1);
      expect(five.settingsReads).toBeLessThanOrEqual(Math.floor(seconds) + 2);
    });

    it('a settings change through the API holds for the very next request, cache or not', async () => {
      const env = await t.client.environments.create({ name: 'round-trips-settings', provider: 'fake', config: {} });
      const sandbox = await t.client.sandboxes.create({ environmentId: env.id });
      await t.client.sandboxes.exec(sandbox.id, { command: ['true'] });
      await t.client.settings.update({ experimental: { enableEnvironments: false } });
      const refused = await t.fetch(`/api/sandboxes/${sandbox.id}/exec`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ command: ['true'] }),
      });
      expect(refused.body).toMatchObject({ error: { code: 'feature_disabled' } });
      await enableEnvironments(t.client);
      expect((await t.client.sandboxes.exec(sandbox.id, { command: ['true'] })).exitCode).toBe(0);
    });

    it("a session's exec reads the session and its sandbox, then the exec's one statement; no second touch or checkpoint read", async () => {
      const env = await t.client.environments.create({ name: 'round-trips-session', provider: 'fake', config: {} });
      const agent = await t.client.agents.create({
        name: 'round-trips',
        sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
      });
      const session = await t.client.sessions.start({ agentId: agent.id });
      await t.client.sessions.exec(session.id, { command: ['true'] });
      await new Promise((resolve) => setTimeout(resolve, 1050));
      const exec = await sent(() => t.client.sessions.exec(session.id, { command: ['true'] }));
      expect(exec.statements).toEqual(['select sessions', 'select sandboxes', 'update sandboxes']);
      // Right after it, the sandbox's read-and-touch is answered from memory (ADR 0033).
      const again = await sent(() => t.client.sessions.exec(session.id, { command: ['true'] }));
      expect(again.statements).toEqual(['select sessions', 'select sandboxes']);
    });

    it("a session start that claims links its primary sandbox in the claim's one statement", async () => {
      const env = await t.client.environments.create({
        name: 'round-trips-session-pool',
        provider: 'fake',
        config: {},
        spec: { warmPool: { size: 1 } },
      });
      await t.server.reconciler.runOnce();
      await t.server.reconciler.settled();
      const agent = await t.client.agents.create({
        name: 'round-trips-pool',
        sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
      });
      await t.server.services.sandboxes.pools.bootTarget(env.id);
      let primary: string | null = null;
      const start = await sent(async () => {
        primary = (await t.client.sessions.start({ agentId: agent.id })).primarySandboxId;
      });
      expect((await t.server.store.repos.sandboxes.get(primary!))!.source).toBe('warm_pool');
      // The session's own transaction (its row, the pin's plan, the room check, `session.started`),
      // then the claim with its activity row and the session's link in one statement (no boot-target
      // reads before it, no transaction around it), then the answer's read of the session.
      expect(start.statements).toEqual([
        'select agents',
        'insert sessions',
        'select environment_revisions',
        'select environment_custom_image_templates',
        'select sandboxes',
        'insert activity',
        'with update sandboxes, insert activity, update sessions',
        'select sessions',
      ]);
    });

    it('a cold create reads the environment and its image side by side, inserts the row with its activity in one statement, and records the instance', async () => {
      const env = await t.client.environments.create({ name: 'round-trips-cold', provider: 'fake', config: {} });
      let sandboxId = '';
      const cold = await sent(async () => {
        sandboxId = (await t.client.sandboxes.create({ environmentId: env.id })).id;
      });
      expect(cold.statements).toEqual([
        'select environments',
        'select environment_custom_image_templates',
        'with insert sandboxes, insert activity',
        'update sandboxes',
      ]);
      // The activity row names the new sandbox, as the transaction wrote it before.
      const [created] = await t.client.activity({ action: 'sandbox.created', limit: 1 });
      expect(created).toMatchObject({ subjectType: 'sandbox', subjectId: sandboxId, details: { environmentId: env.id } });
    });

    it('a claim is one statement — the claim, its activity row, the image touch — after a boot-source read under a second old; nothing after it, the refill comes later', async () => {
      const env = await t.client.environments.create({
        name: 'round-trips-pool',
        provider: 'fake',
        config: {},
        spec: { warmPool: { size: 2 } },
      });
      // An image, so the claim touches it too.
      const { session } = await t.client.customImages.startSetup(env.id);
      await t.client.customImages.finish(session.id);
      await t.server.reconciler.runOnce();
      await t.server.reconciler.runOnce();
      await t.server.reconciler.settled();
      expect(await t.server.store.repos.warmPools.members(env.id)).toHaveLength(2);
      const pools = t.server.services.sandboxes.pools;
      const claimOne = async () => {
        const claimed = await t.client.sandboxes.create({ environmentId: env.id });
        expect(claimed.source).toBe('warm_pool');
        return claimed.id;
      };
      // No boot target read in the last second (none kept): the reads, then the one statement.
      await new Promise((resolve) => setTimeout(resolve, CLAIM_TARGET_CACHE_MS + 50));
      const first = await sent(claimOne);
      expect(first.statements).toEqual([
        'select environments',
        'select environment_custom_image_templates',
        'with update sandboxes, insert activity, update environment_custom_image_templates',
      ]);
      // A target read just before (by the last request, a fill or the pool page): the statement alone.
      await pools.bootTarget(env.id);
      let claimedId = '';
      const claim = await sent(async () => {
        claimedId = await claimOne();
      });
      // No converge, inspect or bootstrap of the member: it ran them when the pool made it.
      expect(claim.statements).toEqual(['with update sandboxes, insert activity, update environment_custom_image_templates']);
      // The claim touched the member's activity: its first exec needs no statement (ADR 0033).
      const exec = await sent(() => t.client.sandboxes.exec(claimedId, { command: ['true'] }));
      expect(exec.statements).toEqual([]);
      // The refill after the claims still comes, without a reconciler pass.
      await expect.poll(async () => (await t.server.store.repos.warmPools.members(env.id)).length, { timeout: 10_000 }).toBe(2);
      // The image was counted as used, by the claim's own statement.
      expect((await t.server.store.repos.templates.active(env.id))!.lastUsedAt).not.toBeNull();
    });
  });
}
