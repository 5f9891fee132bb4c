import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SandcastApiError } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import { createMovableClock } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

const ADMIN_OWNER = { actor: { role: 'admin' as const, keyId: null }, sessionId: null, bindingName: null };

/** Refusals are values here: the code (and status) of an API error, or 'ok'. */
const outcome = (call: () => Promise<unknown>) =>
  call().then(
    () => 'ok',
    (error: unknown) => {
      if (error instanceof SandcastApiError) return `${error.status} ${error.code}`;
      throw error;
    },
  );

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`warm pools [${database.kind}]`, () => {
    let t: TestServer;
    const clock = createMovableClock();
    // Passes are run by the tests; the timer never fires during a test.
    beforeAll(async () => {
      t = await startTestServer({ database, clock, env: { SANDCAST_RECONCILE_INTERVAL_SECONDS: '3600' } });
      await enableEnvironments(t.client);
    });
    afterAll(async () => {
      await t?.close();
    });

    /** One reconciler pass, after whatever pass or refill (scheduled after a claim) is still running. */
    const pass = async () => {
      await t.server.reconciler.settled();
      await t.server.reconciler.runOnce();
      await t.server.reconciler.runOnce();
    };
    const members = (environmentId: string) => t.server.store.repos.warmPools.members(environmentId);
    const capture = async (environmentId: string, marker: string) => {
      const { session } = await t.client.customImages.startSetup(environmentId);
      await t.client.customImages.exec(session.id, { command: ['sh', '-c', `echo ${marker} > image.txt`] });
      return (await t.client.customImages.finish(session.id)).template;
    };
    const deleteAll = async () => {
      for (const sandbox of await t.client.sandboxes.list()) await t.client.sandboxes.delete(sandbox.id);
    };

    it('fills to size, hides members, hands one out on create, refills, and ages members out', async () => {
      const { client } = t;
      const env = await client.environments.create({
        name: 'pooled',
        provider: 'fake',
        config: {},
        spec: { warmPool: { size: 2, maxAgeSeconds: 60 } },
      });
      await pass();
      expect(await client.sandboxes.warmPool(env.id)).toMatchObject({
        size: 2,
        maxAgeSeconds: 60,
        ready: 2,
        booting: 0,
        lastRefillError: null,
      });
      const pooled = await members(env.id);
      expect(pooled.map((m) => [m.status, m.source, m.environmentRevisionId])).toEqual([
        ['running', 'cold', env.currentRevision.id],
        ['running', 'cold', env.currentRevision.id],
      ]);
      // Members are nobody's sandboxes: not listed, not readable.
      expect(await client.sandboxes.list()).toEqual([]);
      expect(await outcome(() => client.sandboxes.get(pooled[0]!.id))).toBe('404 not_found');

      const claimed = await client.sandboxes.create({ environmentId: env.id });
      expect(claimed).toMatchObject({ id: pooled[0]!.id, source: 'warm_pool', status: 'running', forkedFromId: null });
      expect((await client.sandboxes.exec(claimed.id, { command: ['true'] })).exitCode).toBe(0);
      expect((await client.sandboxes.list()).map((s) => s.id)).toEqual([claimed.id]);
      await pass();
      const refilled = await members(env.id);
      expect(refilled).toHaveLength(2);
      expect(refilled.map((m) => m.id)).not.toContain(claimed.id);

      // Past maxAgeSeconds every member is replaced; the claimed sandbox is not touched.
      clock.advance(61_000);
      await pass();
      const renewed = await members(env.id);
      expect(renewed).toHaveLength(2);
      expect(renewed.some((m) => refilled.some((r) => r.id === m.id))).toBe(false);
      expect((await client.sandboxes.get(claimed.id)).status).toBe('running');
      clock.reset();

      // Size 0 drains the pool; creates boot cold.
      await client.environments.update(env.id, { spec: { warmPool: { size: 0 } } });
      await pass();
      expect(await members(env.id)).toEqual([]);
      expect((await client.sandboxes.create({ environmentId: env.id })).source).toBe('cold');
      await deleteAll();
    });

    it('a warmPool change is a runtime knob: a new revision, the image stays linked, the pool drains and refills from the new revision', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'knob', provider: 'fake', config: {} });
      const image = await capture(env.id, 'one');
      const edited = await client.environments.update(env.id, { spec: { warmPool: { size: 1 } } });
      expect(edited.currentRevision.number).toBe(env.currentRevision.number + 1);
      const overview = await client.customImages.overview(env.id);
      expect(overview.activeTemplate?.id).toBe(image.id);
      expect(overview.activeTemplateMatchesConfig).toBe(true);
      await pass();
      const [first] = await members(env.id);
      expect(first).toMatchObject({ imageId: image.id, environmentRevisionId: edited.currentRevision.id });

      const again = await client.environments.update(env.id, { spec: { warmPool: { size: 1, maxAgeSeconds: 600 } } });
      expect((await client.customImages.overview(env.id)).activeTemplateMatchesConfig).toBe(true);
      await pass();
      const [second] = await members(env.id);
      expect(second).toMatchObject({ imageId: image.id, environmentRevisionId: again.currentRevision.id });
      expect(second!.id).not.toBe(first!.id);

      // Capture, rollback and disable each drain the pool and refill it from the new boot image.
      const next = await capture(env.id, 'two');
      await pass();
      expect((await members(env.id)).map((m) => m.imageId)).toEqual([next.id]);
      await client.customImages.rollback(env.id);
      await pass();
      expect((await members(env.id)).map((m) => m.imageId)).toEqual([image.id]);
      await client.customImages.disable(env.id, { deleteProviderTemplate: false });
      await pass();
      expect((await members(env.id)).map((m) => m.imageId)).toEqual([null]);
      await client.environments.update(env.id, { spec: { warmPool: { size: 0 } } });
      await pass();
    });

    it('claims racing a rollback never hand out a member of the superseded image', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'race', provider: 'fake', config: {} });
      const old = await capture(env.id, 'old');
      const superseded = await capture(env.id, 'superseded');
      await client.environments.update(env.id, { spec: { warmPool: { size: 4 } } });
      for (let round = 0; round < 3; round++) {
        await pass();
        expect((await members(env.id)).map((m) => m.imageId)).toEqual(Array(4).fill(round % 2 === 0 ? superseded.id : old.id));
        const pools = t.server.services.sandboxes.pools;
        const staleTarget = await pools.bootTarget(env.id);
        const [rolledBack, ...claims] = await Promise.all([
          client.customImages.rollback(env.id),
          ...Array.from({ length: 3 }, () => client.sandboxes.create({ environmentId: env.id })),
        ]);
        const stale = round % 2 === 0 ? superseded.id : old.id;
        // The rollback's activity is ordered after every claim that took a member of the old image:
        // such a claim held the image row, so the rollback waited for it.
        const log = await t.server.store.repos.activity.list({ limit: 200 });
        const rollbackAt = log.findIndex((a) => a.action === 'environment.custom_image_template.rolled_back');
        for (const sandbox of claims.filter((c) => c.source === 'warm_pool' && c.imageId === stale)) {
          const claimAt = log.findIndex((a) => a.action === 'sandbox.created' && a.subjectId === sandbox.id);
          expect(claimAt, 'a claim of the old image ordered after the rollback').toBeGreaterThan(rollbackAt);
        }
        expect(rolledBack.activeTemplate.id).not.toBe(stale);
        // A claim made from what the environment booted before the rollback takes nothing now (a
        // stale member may still be there: the refill after a claim drains it when it gets to it).
        expect(await pools.claim(staleTarget, ADMIN_OWNER)).toBeNull();
        // After the rollback answered, nothing of the old image is handed out.
        const after = await client.sandboxes.create({ environmentId: env.id });
        expect(after.imageId).toBe(rolledBack.activeTemplate.id);
        await deleteAll();
      }

      // Without a claim nothing refills between the rollback and the next pass, so the members
      // of the superseded image are certainly still there: a claim against the old target takes none.
      await pass();
      const pools = t.server.services.sandboxes.pools;
      const staleTarget = await pools.bootTarget(env.id);
      const stale = staleTarget.image!.id;
      const rolledBack = await client.customImages.rollback(env.id);
      expect(rolledBack.activeTemplate.id).not.toBe(stale);
      const left = await members(env.id);
      expect(left.filter((m) => m.imageId === stale && m.status === 'running')).toHaveLength(4);
      expect(await pools.claim(staleTarget, ADMIN_OWNER)).toBeNull();
      expect((await members(env.id)).map((m) => m.id)).toEqual(left.map((m) => m.id));
      const after = await client.sandboxes.create({ environmentId: env.id });
      expect(after).toMatchObject({ source: 'cold', imageId: rolledBack.activeTemplate.id });
      await deleteAll();
      await client.environments.update(env.id, { spec: { warmPool: { size: 0 } } });
      await pass();
    });

    it('a kept boot target made stale by another server: the claim takes nothing, the target is read afresh, the cold boot is of the new revision', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'stale-kept', provider: 'fake', config: {}, spec: { warmPool: { size: 2 } } });
      await pass();
      const pools = t.server.services.sandboxes.pools;
      // Read by the last request (or fill) under a second ago: the next claim uses it without a read.
      await pools.bootTarget(env.id);
      expect(pools.recentTarget(env.id)?.ctx.environment.currentRevision.id).toBe(env.currentRevision.id);
      // Another server sharing the database makes a new revision; this one is told nothing.
      const stored = (await t.server.store.repos.environments.get(env.id))!;
      const edited = await t.server.store.repos.environments.update(env.id, {
        spec: { ...stored.spec, bootstrap: ['true'] },
        expectedRevisionId: env.currentRevision.id,
      });
      const next = edited!.environment.currentRevision.id;
      const created = await client.sandboxes.create({ environmentId: env.id });
      expect(created).toMatchObject({ source: 'cold', environmentRevisionId: next });
      // The members of the old revision are all still pooled: the claim against the kept target took none.
      expect((await members(env.id)).filter((m) => m.environmentRevisionId === env.currentRevision.id)).toHaveLength(2);
      // The fresh read is kept now; an edit through this server drops it.
      expect(pools.recentTarget(env.id)?.ctx.environment.currentRevision.id).toBe(next);
      await client.environments.update(env.id, { spec: { warmPool: { size: 0 } } });
      expect(pools.recentTarget(env.id)).toBeNull();
      await pass();
      await deleteAll();
    });

    it('a refill that listed a member just before a claim took it leaves the claimed sandbox alone', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'claimed-mid-fill', provider: 'fake', config: {} });
      await client.environments.update(env.id, { spec: { warmPool: { size: 1, maxAgeSeconds: 60 } } });
      await pass();
      const [member] = await members(env.id);
      const pools = t.server.services.sandboxes.pools;
      const target = await pools.bootTarget(env.id);
      // The member ages out, so the next fill drains it; a claim lands between the fill's read and its drain.
      clock.advance(61_000);
      const repo = t.server.store.repos.sandboxes;
      const list = repo.list.bind(repo);
      let claimed: Awaited<ReturnType<typeof pools.claim>> = null;
      repo.list = async (options) => {
        const rows = await list(options);
        if (options?.pooled === true && claimed === null) claimed = await pools.claim(target, ADMIN_OWNER);
        return rows;
      };
      try {
        await pools.fill(env.id);
      } finally {
        repo.list = list;
        clock.reset();
      }
      expect(claimed).toMatchObject({ id: member!.id, pooled: false, source: 'warm_pool' });
      expect(await client.sandboxes.get(member!.id)).toMatchObject({ status: 'running', desiredStatus: 'ready' });
      expect((await client.sandboxes.exec(member!.id, { command: ['true'] })).exitCode).toBe(0);
      await client.environments.update(env.id, { spec: { warmPool: { size: 0 } } });
      await pass();
      await deleteAll();
    });

    it("a session claims a member only when its pin is exactly the pool's; the member already ran the bootstrap", async () => {
      const { client } = t;
      const env = await client.environments.create({
        name: 'session-pool',
        provider: 'fake',
        config: {},
        spec: { bootstrap: ['echo booted >> bootstrap.log'], warmPool: { size: 1 } },
      });
      await pass();
      const exact = await client.agents.create({
        name: 'pool-exact',
        sandboxPolicy: { mode: 'fixed', default: 'work', bindings: { work: { environmentRevisionId: env.currentRevision.id } } },
      });
      const session = await client.sessions.start({ agentId: exact.id });
      const primary = (await t.server.store.repos.sandboxes.get(session.primarySandboxId!))!;
      expect(primary).toMatchObject({ source: 'warm_pool', pooled: false, sessionId: session.id, bindingName: 'work' });
      // The bootstrap ran once, when the member was made, and the claim did not run it again.
      expect((await client.sessions.exec(session.id, { command: ['cat', 'bootstrap.log'] })).stdout).toBe('booted\n');

      // A pin of an older revision than the pool's boots cold.
      await client.environments.update(env.id, { spec: { bootstrap: ['echo again >> bootstrap.log'] } });
      await pass();
      const stale = await client.sessions.start({ agentId: exact.id });
      expect((await t.server.store.repos.sandboxes.get(stale.primarySandboxId!))!.source).toBe('cold');
      for (const s of [session, stale]) await client.sessions.end(s.id);
      await client.environments.update(env.id, { spec: { warmPool: { size: 0 } } });
      await pass();
      await deleteAll();
    });

    it("an agent key forks only sandboxes it created; another key's is refused with a clear 4xx", async () => {
      const auth = await startTestServer({ database, mode: 'authenticated', env: { SANDCAST_RECONCILE_INTERVAL_SECONDS: '3600' } });
      try {
        const admin = auth.clientWithKey((await readFile(path.join(auth.dataDir, 'admin-api-key'), 'utf8')).trim());
        await enableEnvironments(admin);
        const agent = auth.clientWithKey((await admin.keys.create({ name: 'forker', role: 'agent' })).secret);
        const env = await admin.environments.create({ name: 'owned', provider: 'fake', config: {} });
        const adminSandbox = await admin.sandboxes.create({ environmentId: env.id });
        expect(await outcome(() => agent.sandboxes.fork(adminSandbox.id, 1))).toBe('403 forbidden');
        expect((await admin.sandboxes.list()).length).toBe(1);
      } finally {
        await auth.close();
      }
    });

    it('fork: files visible, isolated, counted; bad input is a clear 4xx; a partial failure keeps nothing', async () => {
      const { client } = t;
      const env = await client.environments.create({ name: 'forked', provider: 'fake', config: {} });
      const source = await client.sandboxes.create({ environmentId: env.id });
      await client.sandboxes.exec(source.id, { command: ['sh', '-c', 'echo before > shared.txt'] });
      const answer = await client.sandboxes.fork(source.id, 3);
      expect(answer.processesCopied).toBe(false);
      expect(answer.note).toMatch(/processes are not copied/);
      expect(answer.sandboxes).toHaveLength(3);
      for (const fork of answer.sandboxes) {
        expect(fork).toMatchObject({
          source: 'fork',
          forkedFromId: source.id,
          environmentRevisionId: source.environmentRevisionId,
          status: 'running',
        });
        expect((await client.sandboxes.exec(fork.id, { command: ['cat', 'shared.txt'] })).stdout).toBe('before\n');
      }
      await client.sandboxes.exec(answer.sandboxes[0]!.id, { command: ['sh', '-c', 'echo mine > shared.txt'] });
      expect((await client.sandboxes.exec(source.id, { command: ['cat', 'shared.txt'] })).stdout).toBe('before\n');
      expect((await client.sandboxes.exec(answer.sandboxes[1]!.id, { command: ['cat', 'shared.txt'] })).stdout).toBe('before\n');

      const raw = (body: unknown, id = source.id) =>
        t.fetch(`/api/sandboxes/${id}/fork`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      for (const body of [{ count: 0 }, { count: 17 }, { count: 'x' }, { count: 1.5 }, {}, { count: 1, extra: true }]) {
        const reply = await raw(body);
        expect(reply.status, JSON.stringify(body)).toBe(400);
        expect((reply.body as { error: { message: string } }).error.message).toMatch(/count|extra|unrecognized/i);
      }
      expect((await raw({ count: 1 }, 'sbx_missing')).status).toBe(404);

      // A partial failure: the fake makes one fork, fails the second, and removes the first.
      const failing = await client.environments.create({
        name: 'fork-fails',
        provider: 'fake',
        config: { simulate: { failForkAfter: 1 } },
      });
      const brittle = await client.sandboxes.create({ environmentId: failing.id });
      const listed = (await client.sandboxes.list()).length;
      const refused = await outcome(() => client.sandboxes.fork(brittle.id, 3));
      expect(refused).toMatch(/^5\d\d provider_error$|^502/);
      expect((await client.sandboxes.list()).length).toBe(listed);
      const instances = await t.server.providers.get('fake')!.provider.listInstances();
      const live = new Set((await t.server.store.repos.sandboxes.list()).map((s) => s.id));
      expect(instances.filter((i) => i.ownerKind === 'sandbox' && !live.has(i.ownerId))).toEqual([]);
      await deleteAll();
    });
    it('members count against SANDCAST_MAX_SANDBOXES: the pool stops short and says why, creates and forks are refused at the limit', async () => {
      const limited = await startTestServer({
        database,
        env: { SANDCAST_RECONCILE_INTERVAL_SECONDS: '3600', SANDCAST_MAX_SANDBOXES: '6' },
      });
      await enableEnvironments(limited.client);
      const { client } = limited;
      const pass = async () => {
        await limited.server.reconciler.settled();
        await limited.server.reconciler.runOnce();
        await limited.server.reconciler.runOnce();
      };
      try {
        const env = await client.environments.create({ name: 'limited', provider: 'fake', config: {}, spec: { warmPool: { size: 4 } } });
        await pass();
        expect((await client.sandboxes.warmPool(env.id)).ready).toBe(4);
        const taken: Array<{ id: string }> = [];
        for (let i = 0; i < 3; i++) {
          taken.push(await client.sandboxes.create({ environmentId: env.id }));
          await pass();
        }
        // 3 claimed + 3 members = 6, the limit: the pool refills no further.
        const state = await client.sandboxes.warmPool(env.id);
        expect(state.ready).toBe(3);
        expect(state.lastRefillError).toMatch(/allows 6 sandboxes/);
        for (let i = 0; i < 3; i++) expect((await client.sandboxes.create({ environmentId: env.id })).source).toBe('warm_pool');
        // The refills those claims scheduled find no room; none may land after the delete below.
        await pass();
        expect(await outcome(() => client.sandboxes.create({ environmentId: env.id }))).toBe('409 conflict');
        expect(await outcome(() => client.sandboxes.fork(taken[0]!.id, 1))).toBe('409 conflict');
        const before = (await limited.server.store.repos.sandboxes.list()).length;
        await client.sandboxes.delete(taken[1]!.id);
        expect(await outcome(() => client.sandboxes.fork(taken[0]!.id, 2))).toBe('409 conflict');
        expect((await limited.server.store.repos.sandboxes.list()).length).toBe(before - 1);
        expect((await client.sandboxes.fork(taken[0]!.id, 1)).sandboxes).toHaveLength(1);
      } finally {
        await limited.close();
      }
    });
  });
}
