/**
 * Session start → first exec, through the real API, against the raw provider's create → exec in
 * the same run (ARCHITECTURE §12: the control plane's overhead). A session resolves its agent's
 * policy, pins the revision and image into a primary sandbox and provisions it eagerly, so the
 * figure includes all of that. Bounded loops; cleans up.
 *
 *   npx tsx bench/sessions/run.ts [--provider local|docker] [--iterations 20]
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
import { startServer } from '@sandcast/server';
import { benchServerConfig } from '../support/bench-config.ts';
import { percentile, row, timed } from '../support/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const PROVIDER = option('--provider', 'local');
const ITERATIONS = Math.min(100, Math.max(3, Number(option('--iterations', '20'))));
const DOCKER_IMAGE = process.env.SANDCAST_DOCKER_TEST_IMAGE ?? 'sandcast-test/debian:bookworm';

async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-sessions-'));
  const provider: SandboxProvider = PROVIDER === 'docker' ? createDockerProvider({ dataDir }) : createLocalProvider({ dataDir });
  const availability = await provider.availability();
  if (!availability.available) throw new Error(`the ${PROVIDER} provider cannot run here: ${availability.reason}`);
  const config = PROVIDER === 'docker' ? { image: DOCKER_IMAGE } : {};

  const server = await startServer(benchServerConfig(dataDir, { rawRounds: true }), {
    providers: [provider],
    store: createStore(await createDb({ pglite: 'memory://' })),
  });
  const client = new SandcastClient({ baseUrl: server.url, transport: createNodeTransport() });
  try {
    await client.settings.update({ experimental: { enableEnvironments: true } });
    const env = await client.environments.create({ name: 'bench-sessions', provider: PROVIDER, config });
    const agent = await client.agents.create({
      name: 'bench-agent',
      sandboxPolicy: { mode: 'fixed', default: 'work', bindings: { work: { environmentRevisionId: env.currentRevision.id } } },
    });

    const viaSession: number[] = [];
    const startOnly: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < ITERATIONS + 1; i++) {
      const measure = i > 0; // the first round warms caches
      let started = 0;
      const a = await timed(async () => {
        const t0 = performance.now();
        const session = await client.sessions.start({ agentId: agent.id });
        started = performance.now() - t0;
        const out = await client.sessions.exec(session.id, { command: ['true'] });
        if (out.exitCode !== 0) throw new Error(`true exited ${out.exitCode}: ${out.stderr}`);
        void client.sessions.end(session.id).catch(() => undefined);
      });
      const b = await timed(async () => {
        const created = await provider.create({
          sandboxId: `bench-raw-${i}`,
          environmentId: env.id,
          config: provider.configSchema.parse(config),
        });
        await provider.exec(created.instanceId, { command: ['true'] });
        void provider.destroy(created.instanceId).catch(() => undefined);
      });
      if (measure) {
        viaSession.push(a);
        startOnly.push(started);
        raw.push(b);
      }
    }

    console.log(`\nsessions on the ${PROVIDER} provider, ${ITERATIONS} iterations (+1 warm-up), one run\n`);
    console.log(row('raw provider create → exec true (baseline)', raw));
    console.log(row('API session start → first exec true', viaSession, raw));
    console.log(row('  of which session start (eager provisioning)', startOnly, raw));
    const overhead = percentile(viaSession, 50) - percentile(raw, 50);
    console.log(`\ncontrol-plane overhead at p50: ${overhead.toFixed(1)} ms`);
  } finally {
    await server.reconciler.runOnce().catch(() => undefined);
    await server.close();
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

await main();
