/**
 * Warm-pool claim → first exec through the API, against a cold create → first exec in the same run
 * (ARCHITECTURE §12). The pool is refilled between rounds by a reconciler pass, outside the timing:
 * the figure is what a caller waits for when a member is ready. Goal: claim → first exec p50 < 10 ms.
 *
 * Also against the raw provider's exec `true` in a running sandbox, timed in the same rounds: a
 * claim → first exec can cost no less than that one exec. `--refill-delay-ms` sets how long after a
 * claim its refill starts (the server's default otherwise; 0 measures a refill competing with the
 * claimer's first exec). `--provider null` leaves the provider out (bench/support/null-provider.ts).
 *
 *   npx tsx bench/pools/run.ts [--provider local|docker|null] [--iterations 20] [--refill-delay-ms N]
 *   (env BENCH_POOL_SIZE, default 4: members kept; BENCH_ITERATIONS overrides --iterations)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SandcastClient } from '@sandcast/client';
import { createNodeTransport } from '@sandcast/client/node';
import { createDb, createStore } from '@sandcast/db';
import { createDockerProvider } from '@sandcast/provider-docker';
import { createLocalProvider } from '@sandcast/provider-local';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { loadConfig, startServer } from '@sandcast/server';
import { createNullProvider } from '../support/null-provider.ts';
import { percentile, row, timed } from '../support/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const PROVIDER = option('--provider', 'local');
const ITERATIONS = Math.min(100, Math.max(3, Number(process.env.BENCH_ITERATIONS ?? option('--iterations', '20'))));
const POOL_SIZE = Math.min(32, Math.max(1, Number(process.env.BENCH_POOL_SIZE ?? '4')));
const REFILL_DELAY = args.includes('--refill-delay-ms') ? Number(option('--refill-delay-ms', '')) : undefined;
const DOCKER_IMAGE = process.env.SANDCAST_DOCKER_TEST_IMAGE ?? 'sandcast-test/debian:bookworm';

async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-pools-'));
  const provider: SandboxProvider =
    PROVIDER === 'docker'
      ? createDockerProvider({ dataDir })
      : PROVIDER === 'null'
        ? createNullProvider(dataDir)
        : createLocalProvider({ dataDir });
  const availability = await provider.availability();
  if (!availability.available) throw new Error(`the ${PROVIDER} provider cannot run here: ${availability.reason}`);
  const config = PROVIDER === 'docker' ? { image: DOCKER_IMAGE } : {};
  const providerId = PROVIDER === 'null' ? 'local' : PROVIDER;
  const server = await startServer(
    loadConfig({
      SANDCAST_PORT: '0',
      SANDCAST_SSH_PORT: 'off',
      SANDCAST_DATA_DIR: dataDir,
      SANDCAST_LOG_LEVEL: 'warn',
      // Passes are run by the benchmark between rounds.
      SANDCAST_RECONCILE_INTERVAL_SECONDS: '3600',
    }),
    { providers: [provider], store: createStore(await createDb({ pglite: 'memory://' })), refillDelayMs: REFILL_DELAY },
  );
  const client = new SandcastClient({ baseUrl: server.url, transport: createNodeTransport() });
  const settle = async () => {
    await server.reconciler.runOnce();
    await server.reconciler.runOnce();
  };
  try {
    await client.settings.update({ experimental: { enableEnvironments: true } });
    const pooled = await client.environments.create({
      name: 'bench-pooled',
      provider: providerId,
      config,
      spec: { warmPool: { size: POOL_SIZE } },
    });
    const cold = await client.environments.create({ name: 'bench-cold', provider: providerId, config });
    await settle();
    // A running sandbox the raw provider's exec `true` runs in, once per round (kept across rounds).
    const kept = await client.sandboxes.create({ environmentId: cold.id });
    const rawInstance = (await server.store.repos.sandboxes.get(kept.id))!.providerInstanceId!;
    const rawExecs: number[] = [];

    const claimed: number[] = [];
    const claimOnly: number[] = [];
    const coldBoots: number[] = [];
    let misses = 0;
    for (let i = 0; i < ITERATIONS + 1; i++) {
      const measure = i > 0; // the first round warms caches
      let source = '';
      let claimMs = 0;
      const a = await timed(async () => {
        const t0 = performance.now();
        const sandbox = await client.sandboxes.create({ environmentId: pooled.id });
        claimMs = performance.now() - t0;
        source = sandbox.source;
        const out = await client.sandboxes.exec(sandbox.id, { command: ['true'] });
        if (out.exitCode !== 0) throw new Error(`true exited ${out.exitCode}: ${out.stderr}`);
      });
      const b = await timed(async () => {
        const sandbox = await client.sandboxes.create({ environmentId: cold.id });
        const out = await client.sandboxes.exec(sandbox.id, { command: ['true'] });
        if (out.exitCode !== 0) throw new Error(`true exited ${out.exitCode}: ${out.stderr}`);
      });
      if (source !== 'warm_pool') misses++;
      else if (measure) {
        claimed.push(a);
        claimOnly.push(claimMs);
      }
      const r = await timed(() => provider.exec(rawInstance, { command: ['true'] }));
      if (measure) {
        coldBoots.push(b);
        rawExecs.push(r);
      }
      // Out of the timing: delete what was made and let the pool fill again.
      for (const sandbox of await client.sandboxes.list()) if (sandbox.id !== kept.id) await client.sandboxes.delete(sandbox.id);
      await settle();
    }

    const delay = REFILL_DELAY === undefined ? 'the default refill delay' : `a refill delay of ${REFILL_DELAY} ms`;
    console.log(
      `\nwarm pools on the ${PROVIDER} provider (pool of ${POOL_SIZE}, ${delay}), ${ITERATIONS} iterations (+1 warm-up), one run\n`,
    );
    console.log(row('API cold create → first exec true (baseline)', coldBoots));
    console.log(row('API warm-pool claim → first exec true', claimed, coldBoots));
    console.log(row('  of which the claim (POST /api/sandboxes)', claimOnly, coldBoots));
    if (PROVIDER !== 'null') {
      console.log(row('raw provider exec true, running sandbox (baseline)', rawExecs));
      console.log(row('API warm-pool claim → first exec true', claimed, rawExecs));
    }
    console.log(`\nclaims that found no ready member (booted cold, left out): ${misses}`);
    const p50 = percentile(claimed, 50);
    console.log(`goal claim → first exec p50 < 10 ms: ${p50 < 10 ? 'met' : 'not met'} (${p50.toFixed(1)} ms)`);
  } finally {
    await client.environments.list().then(
      async (envs) => {
        for (const env of envs) await client.environments.update(env.id, { spec: { warmPool: { size: 0 } } }).catch(() => undefined);
      },
      () => undefined,
    );
    await settle().catch(() => undefined);
    for (const instance of await provider.listInstances().catch(() => []))
      await provider.destroy(instance.instanceId).catch(() => undefined);
    await server.close();
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

await main();
