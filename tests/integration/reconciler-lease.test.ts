import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider, type FakeProvider } from '@sandcast/provider-fake';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { createMovableClock, createReconciler, type Reconciler } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';

/** The provider operations that name one instance; each is counted. */
const PER_INSTANCE = ['inspect', 'stop', 'start', 'destroy', 'exec'] as const;

/**
 * The fake, with every call that names an instance counted: an `overlap` is a call on an
 * instance while another call on it is still in flight; a `double` is a second call on an
 * instance within one round of passes (each pass makes at most one per sandbox).
 */
function instrument(fake: FakeProvider) {
  const inFlight = new Map<string, number>();
  let round = new Map<string, number>();
  const counts = { calls: 0, overlaps: 0, doubles: 0, byOperation: {} as Record<string, number> };
  const provider: SandboxProvider = { ...fake };
  for (const operation of PER_INSTANCE) {
    const original = fake[operation] as (instanceId: string, ...rest: unknown[]) => Promise<unknown>;
    (provider as unknown as Record<string, unknown>)[operation] = async (instanceId: string, ...rest: unknown[]) => {
      counts.calls++;
      counts.byOperation[operation] = (counts.byOperation[operation] ?? 0) + 1;
      if ((inFlight.get(instanceId) ?? 0) > 0) counts.overlaps++;
      if ((round.get(instanceId) ?? 0) > 0) counts.doubles++;
      inFlight.set(instanceId, (inFlight.get(instanceId) ?? 0) + 1);
      round.set(instanceId, (round.get(instanceId) ?? 0) + 1);
      try {
        // Long enough for a second caller to arrive while this one is in flight.
        await sleep(1);
        return await original(instanceId, ...rest);
      } finally {
        inFlight.set(instanceId, inFlight.get(instanceId)! - 1);
      }
    };
  }
  return {
    provider,
    counts,
    newRound: () => {
      round = new Map();
    },
    reset: () => {
      Object.assign(counts, { calls: 0, overlaps: 0, doubles: 0, byOperation: {} });
      round = new Map();
    },
  };
}

/** Postgres is what several servers share in production: the full count there, a shorter run on PGlite. */
const passesOn = (kind: string) => (kind === 'postgres' ? 1_000 : 200);
/** Rounds between lease hand-overs (the clock jumps past the lease's expiry). */
const HANDOVER_EVERY = 25;
/** The servers' interval (no timer pass runs during the test); the lease lasts three of them. */
const INTERVAL_SECONDS = 3_600;
const LEASE_TTL_MS = 3 * INTERVAL_SECONDS * 1000;

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null)(`two servers on one database reconcile one at a time [${database.kind}]`, () => {
    const clock = createMovableClock();
    let dataDir: string;
    let fake: FakeProvider;
    let probe: ReturnType<typeof instrument>;
    const servers: TestServer[] = [];
    const sandboxIds: string[] = [];

    beforeAll(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-lease-'));
      fake = createFakeProvider({ dataDir });
      probe = instrument(fake);
      const stores = await database.openShared();
      for (const store of stores) {
        servers.push(
          await startTestServer({
            database,
            store,
            providers: [probe.provider],
            clock,
            env: { SANDCAST_RECONCILE_INTERVAL_SECONDS: String(INTERVAL_SECONDS) },
          }),
        );
      }
      const [a] = servers;
      await enableEnvironments(a!.client);
      const env = await a!.client.environments.create({ name: 'leased', provider: 'fake', config: {} });
      for (let i = 0; i < 4; i++) sandboxIds.push((await a!.client.sandboxes.create({ environmentId: env.id })).id);
    }, 60_000);

    afterAll(async () => {
      for (const server of servers) await server.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    }, 60_000);

    /** Keeps work flowing: whatever a pass (or the idle policy) stopped is wanted running again. */
    const wantAllReady = async () => {
      const repos = servers[0]!.server.store.repos;
      for (const id of sandboxIds) {
        const sandbox = await repos.sandboxes.get(id);
        if (sandbox?.status === 'stopped' && sandbox.desiredStatus === 'stopped')
          await repos.sandboxes.update(id, { desiredStatus: 'ready' });
      }
    };

    /** Both reconcilers' passes at once, in a random order; each with its result. */
    const round = async (reconcilers: Reconciler[]) => {
      probe.newRound();
      const order = Math.random() < 0.5 ? reconcilers : [...reconcilers].reverse();
      return Promise.all(order.map(async (reconciler) => ({ reconciler, result: await reconciler.runOnce() })));
    };

    const PASSES = passesOn(database.kind);

    it(`never has both call a provider for one sandbox: ${PASSES} passes, 0 overlapping or double calls`, async () => {
      const [a, b] = servers.map((s) => s.server.reconciler) as [Reconciler, Reconciler];
      // The passes the servers ran when they started are over.
      await Promise.all([a.runOnce(), b.runOnce()]);
      probe.reset();
      const led = new Map<Reconciler, number>([
        [a, 0],
        [b, 0],
      ]);
      let passes = 0;
      let rounds = 0;
      while (passes < PASSES) {
        if (rounds % HANDOVER_EVERY === 0) {
          // The lease runs out; the next leader, alternately, takes it in a pass of its own.
          clock.advance(LEASE_TTL_MS + 1);
          const next = (rounds / HANDOVER_EVERY) % 2 === 0 ? b : a;
          probe.newRound();
          const solo = await next.runOnce();
          expect(solo.leader).toBe(true);
          led.set(next, led.get(next)! + 1);
          passes++;
        }
        await wantAllReady();
        const results = await round([a, b]);
        rounds++;
        passes += results.length;
        // Exactly one of them holds the lease in any round.
        const leaders = results.filter(({ result }) => result.leader);
        expect(leaders).toHaveLength(1);
        led.set(leaders[0]!.reconciler, led.get(leaders[0]!.reconciler)! + 1);
      }
      expect(probe.counts.overlaps).toBe(0);
      expect(probe.counts.doubles).toBe(0);
      // Real work was done, by both servers in turn.
      expect(probe.counts.calls).toBeGreaterThan(PASSES / 4);
      expect(probe.counts.byOperation.stop).toBeGreaterThan(0);
      expect(probe.counts.byOperation.start).toBeGreaterThan(0);
      expect(led.get(a)).toBeGreaterThan(0);
      expect(led.get(b)).toBeGreaterThan(0);
    }, 300_000);

    it('the counter sees the double calls when both reconcile without the lease', async () => {
      const unleased = servers.map((s) =>
        createReconciler({
          store: s.server.store,
          providers: s.server.providers,
          setupSessions: s.server.services.setupSessions,
          lifecycle: s.server.services.sandboxLifecycle,
          log: s.server.app.log,
          intervalMs: INTERVAL_SECONDS * 1000,
          clock,
          leaderLease: false,
        }),
      );
      probe.reset();
      for (let i = 0; i < 10; i++) {
        await wantAllReady();
        const results = await round(unleased);
        expect(results.every(({ result }) => result.leader)).toBe(true);
      }
      expect(probe.counts.doubles).toBeGreaterThan(0);
    }, 60_000);

    it('a server that shuts down gives the lease up: the other takes over at its next pass', async () => {
      const [a, b] = servers.map((s) => s.server.reconciler) as [Reconciler, Reconciler];
      clock.advance(LEASE_TTL_MS + 1);
      expect((await a.runOnce()).leader).toBe(true);
      expect((await b.runOnce()).leader).toBe(false);
      await a.stop();
      expect((await b.runOnce()).leader).toBe(true);
      expect((await a.runOnce()).leader).toBe(false);
    });
  });
}
