/**
 * Many sandboxes at once on the local provider, through the real API (ARCHITECTURE §12):
 *  - creation throughput of N sandboxes (default 200, `SANDCAST_BENCH_SCALE_N`) with at most 8
 *    creates in flight;
 *  - API latency under a bounded load (autocannon in a worker thread against the loopback server,
 *    a fixed number of connections for a fixed time, alternating `GET /api/sandboxes/:id` and
 *    `POST /api/sandboxes/:id/exec` of `true`) with N sandboxes alive, against the same load with
 *    only the target sandbox alive, measured in the same run;
 *  - host memory per idle sandbox: MemTotal − MemAvailable (/proc/meminfo) and the provider's
 *    cgroup memory before and after, divided by N;
 *  - where it breaks: keeps creating in steps up to `SANDCAST_BENCH_SCALE_MAX` (default N, that is
 *    no step beyond N) and stops at the first failure, printing its reason and the host's counters
 *    (file descriptors, processes, overlay mounts, memory).
 * Every sandbox is deleted at the end, failure or not.
 *
 *   SANDCAST_BENCH_SCALE_N=200 SANDCAST_BENCH_SCALE_MAX=400 npx tsx bench/scale/run.ts [--seconds 10] [--connections 8]
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { SandcastClient } from '@sandcast/client';
import { createDb, createStore } from '@sandcast/db';
import { createLocalProvider } from '@sandcast/provider-local';
import { loadConfig, startServer } from '@sandcast/server';
import autocannon from 'autocannon';

const USAGE =
  'usage: [SANDCAST_BENCH_SCALE_N=200] [SANDCAST_BENCH_SCALE_MAX=N] npx tsx bench/scale/run.ts [--seconds 10] [--connections 8] [--concurrency 8]';
const args = process.argv.slice(2);
if (args.includes('--help')) {
  console.log(USAGE);
  process.exit(0);
}
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const N = Math.min(2000, Math.max(1, Number(process.env.SANDCAST_BENCH_SCALE_N ?? '200')));
const MAX = Math.min(5000, Math.max(N, Number(process.env.SANDCAST_BENCH_SCALE_MAX ?? String(N))));
const STEP = 100;
const SECONDS = Math.min(60, Math.max(2, Number(option('--seconds', '10'))));
const CONNECTIONS = Math.min(64, Math.max(1, Number(option('--connections', '8'))));
const CONCURRENCY = Math.min(32, Math.max(1, Number(option('--concurrency', '8'))));

const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

async function meminfo(): Promise<number> {
  const text = await readFile('/proc/meminfo', 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return kib('MemTotal') - kib('MemAvailable');
}

/** The local provider's cgroups (`sandcast-local-<hash>`, v2 or v1 memory), each with its memory in use. */
async function providerCgroups(): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const [root, file] of [
    ['/sys/fs/cgroup', 'memory.current'],
    ['/sys/fs/cgroup/memory', 'memory.usage_in_bytes'],
  ] as const) {
    for (const name of (await readdir(root).catch(() => [] as string[])).filter((n) => n.startsWith('sandcast-local-'))) {
      const bytes = Number(await readFile(path.join(root, name, file), 'utf8').catch(() => 'NaN'));
      if (Number.isFinite(bytes)) found.set(name, bytes);
    }
  }
  return found;
}

/** The provider cgroup our sandboxes sit in, read from a sandbox process this server started (others' tests have their own). */
async function ourCgroup(): Promise<string | undefined> {
  const childrenOf = async (pid: string) =>
    (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')).split(' ').filter(Boolean);
  // Sandboxes are started by the spawner helper (ADR 0028), so they are grandchildren or deeper.
  let level = await childrenOf(String(process.pid));
  for (let depth = 0; depth < 4 && level.length > 0; depth++) {
    for (const pid of level) {
      const name = /sandcast-local-[0-9a-f]+/.exec(await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => ''))?.[0];
      if (name) return name;
    }
    level = (await Promise.all(level.map(childrenOf))).flat();
  }
  return undefined;
}

/** What runs out first on a host: the counters a failure's reason is read against. */
async function hostCounters(): Promise<string> {
  const fds = (await readdir('/proc/self/fd')).length;
  const fdLimit = /Max open files\s+(\d+)/.exec(await readFile('/proc/self/limits', 'utf8'))?.[1];
  const pids = (await readdir('/proc')).filter((n) => /^\d+$/.test(n)).length;
  const pidMax = (await readFile('/proc/sys/kernel/pid_max', 'utf8')).trim();
  const overlays = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').filter((l) => l.includes(' - overlay ')).length;
  const mem = await readFile('/proc/meminfo', 'utf8');
  const available = Number(/^MemAvailable:\s+(\d+)/m.exec(mem)?.[1] ?? 0) * 1024;
  return `server fds ${fds}/${fdLimit}, host processes ${pids}/${pidMax}, overlay mounts ${overlays}, MemAvailable ${mib(available)}`;
}

/** Runs `count` creates with at most CONCURRENCY in flight; stops at the first failure and says why. */
async function createMany(
  client: SandcastClient,
  environmentId: string,
  count: number,
  into: string[],
): Promise<{ ms: number; failure?: string }> {
  const started = performance.now();
  let next = 0;
  let failure: string | undefined;
  const worker = async () => {
    while (next < count && !failure) {
      next++;
      try {
        const sandbox = await client.sandboxes.create({ environmentId });
        into.push(sandbox.id);
        if (sandbox.status !== 'running') failure ??= `sandbox ${sandbox.id} came up ${sandbox.status}`;
      } catch (error) {
        failure ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { ms: performance.now() - started, failure };
}

interface Latency {
  p50: number;
  p99: number;
  rps: number;
  non2xx: number;
  errors: number;
}

async function underLoad(url: string, sandboxId: string): Promise<Latency> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    workers: 1, // the load generator gets its own thread, not the server's event loop
    requests: [
      { method: 'GET', path: `/api/sandboxes/${sandboxId}` },
      {
        method: 'POST',
        path: `/api/sandboxes/${sandboxId}/exec`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ command: ['true'] }),
      },
    ],
  });
  return { p50: result.latency.p50, p99: result.latency.p99, rps: result.requests.average, non2xx: result.non2xx, errors: result.errors };
}

const latencyLine = (label: string, l: Latency, baseline?: Latency) =>
  `${label.padEnd(44)} p50 ${l.p50.toFixed(1).padStart(7)} ms   p99 ${l.p99.toFixed(1).padStart(7)} ms   ${l.rps.toFixed(0).padStart(5)} req/s` +
  `${baseline ? `   p99 ×${(l.p99 / baseline.p99).toFixed(2)}` : ''}${l.non2xx + l.errors > 0 ? `   (${l.non2xx} non-2xx, ${l.errors} errors)` : ''}   load ${load()}`;

async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-scale-'));
  const provider = createLocalProvider({ dataDir });
  const availability = await provider.availability();
  if (!availability.available) throw new Error(`the local provider cannot run here: ${availability.reason}`);
  const server = await startServer(
    loadConfig({ SANDCAST_PORT: '0', SANDCAST_SSH_PORT: '0', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'warn' }),
    { providers: [provider], store: createStore(await createDb({ pglite: 'memory://' })) },
  );
  const client = new SandcastClient({ baseUrl: server.url });
  const alive: string[] = [];
  try {
    await client.settings.update({ experimental: { enableEnvironments: true } });
    const env = await client.environments.create({ name: 'bench-scale', provider: 'local', config: {} });

    // The target of the load, alone: the idle baseline.
    const target = await client.sandboxes.create({ environmentId: env.id });
    alive.push(target.id);
    await client.sandboxes.exec(target.id, { command: ['true'] });
    const idle = await underLoad(server.url, target.id);

    const hostBefore = await meminfo();
    const groupsAtOne = await providerCgroups();
    const created = await createMany(client, env.id, N - 1, alive);
    if (created.failure) throw new Error(`creating ${N} sandboxes failed at ${alive.length}: ${created.failure}; ${await hostCounters()}`);
    await new Promise((resolve) => setTimeout(resolve, 2000)); // let page cache and slab settle before reading memory
    const hostAfter = await meminfo();
    const groupsAfter = await providerCgroups();
    const ours = await ourCgroup();
    const loaded = await underLoad(server.url, target.id);

    console.log(
      `\nscale on the local provider, one run: ${N} sandboxes alive, ${CONCURRENCY} creates in flight, load ${CONNECTIONS} connections × ${SECONDS} s\n`,
    );
    console.log(
      `created ${N - 1} sandboxes in ${(created.ms / 1000).toFixed(1)} s: ${(((N - 1) * 1000) / created.ms).toFixed(1)} creates/s, ${(created.ms / (N - 1)).toFixed(0)} ms each on average   load ${load()}`,
    );
    console.log(latencyLine('API under load, 1 sandbox alive (baseline)', idle));
    console.log(latencyLine(`API under load, ${N} sandboxes alive`, loaded, idle));
    const perHost = (hostAfter - hostBefore) / (N - 1);
    const cgroupDelta = ours ? ((groupsAfter.get(ours) ?? 0) - (groupsAtOne.get(ours) ?? 0)) / (N - 1) : Number.NaN;
    console.log(
      `memory per idle sandbox: host ${mib(perHost)} (MemTotal − MemAvailable, shared machine: others' work moves it), cgroup ${ours ? mib(cgroupDelta) : 'n/a (no provider cgroup found)'}`,
    );
    console.log(`host at ${N}: ${await hostCounters()}`);

    if (MAX > N) {
      let failure: string | undefined;
      for (let at = N; at < MAX && !failure; at += STEP) {
        const step = await createMany(client, env.id, Math.min(STEP, MAX - at), alive);
        failure = step.failure;
        console.log(`beyond: ${alive.length} sandboxes alive, last step ${(step.ms / 1000).toFixed(1)} s   load ${load()}`);
      }
      console.log(
        failure
          ? `first failure at ${alive.length} sandboxes: ${failure}\n  ${await hostCounters()}`
          : `no failure up to ${alive.length} sandboxes; ${await hostCounters()}`,
      );
    }
  } finally {
    let next = 0;
    const ids = [...alive];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < ids.length) {
          const id = ids[next++]!;
          await client.sandboxes.delete(id).catch(() => undefined);
        }
      }),
    );
    await server.reconciler.runOnce().catch(() => undefined);
    await server.close();
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

await main();
// A teardown still settling in the background (a delete, a provider's cleanup) must not keep the run open.
process.exit(0);
