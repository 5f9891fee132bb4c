/**
 * The control plane's own cost on the local provider (ARCHITECTURE §12, issue 16 item 1), from
 * one run, interleaved:
 *  - `POST /api/sandboxes` → first `POST …/exec` of `true`, cold, against the raw provider's
 *    create → exec `true` (baseline);
 *  - `POST …/exec` of `true` in a running sandbox against the raw provider's exec `true`;
 *  - with `--spans`, where a request's time goes: the database round trips and provider calls
 *    made while it runs (timed by wrapping the store and the provider the server is given), the
 *    rest being HTTP, validation, presentation and the client.
 * The client is the SDK with its Node transport (`@sandcast/client/node`, for Node callers); the
 * exec is also timed through the SDK's default `fetch` transport, interleaved.
 * Each API figure is also measured the old way, with every host command forked straight from
 * the server process (SANDCAST_LOCAL_SPAWNER=direct, switched per call) instead of through the
 * local provider's spawner process. Bounded loops; cleans up.
 *
 * `--provider null` measures the control plane alone: the fake provider with its commands answered
 * in memory (no process is started), so the API figures are HTTP, validation, the database and
 * presentation, and the raw provider figures are next to nothing.
 *
 *   npx tsx bench/api-overhead/run.ts [--provider local|null] [--iterations 20] [--execs 40] [--db file|memory] [--spans]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { SandcastClient } from '@sandcast/client';
import { createNodeTransport } from '@sandcast/client/node';
import { createDb, createStore, type Repositories, type Store } from '@sandcast/db';
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
const ITERATIONS = Math.min(100, Math.max(3, Number(option('--iterations', '20'))));
const EXECS = Math.min(500, Math.max(5, Number(option('--execs', '40'))));
const DB = option('--db', 'file');
const SPANS = args.includes('--spans');
const PROVIDER = option('--provider', 'local');
if (PROVIDER !== 'local' && PROVIDER !== 'null') throw new Error(`--provider takes local or null; got ${PROVIDER}`);
const WARMUP = 2;

/** Time spent in wrapped calls, by name, while `spans.on`. */
const spans = { on: false, db: new Map<string, number[]>(), provider: new Map<string, number[]>() };

function note(into: Map<string, number[]>, name: string, ms: number) {
  if (!spans.on) return;
  const list = into.get(name) ?? [];
  list.push(ms);
  into.set(name, list);
}

/** Wraps every async function of `target` so its duration is noted under `prefix.name`. */
function timedObject<T extends object>(target: T, into: Map<string, number[]>, prefix: string): T {
  return new Proxy(target, {
    get(object, key, receiver) {
      const value = Reflect.get(object, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      return (...params: unknown[]) => {
        const started = performance.now();
        const out = value.apply(object, params);
        if (out instanceof Promise) return out.finally(() => note(into, `${prefix}${key}`, performance.now() - started));
        return out;
      };
    },
  });
}

function timedRepos(repos: Repositories, prefix = ''): Repositories {
  return Object.fromEntries(
    Object.entries(repos).map(([name, repo]) => [name, timedObject(repo as object, spans.db, `${prefix}${name}.`)]),
  ) as unknown as Repositories;
}

function timedStore(store: Store): Store {
  return {
    ...store,
    repos: timedRepos(store.repos),
    transaction: async (fn) => {
      const started = performance.now();
      try {
        return await store.transaction((repos) => fn(timedRepos(repos, 'tx:')));
      } finally {
        note(spans.db, 'transaction (whole)', performance.now() - started);
      }
    },
  };
}

function spanReport(title: string, requests: number) {
  const lines = [`\n${title}: per request, summed over its calls (${requests} requests)`];
  for (const [kind, map] of [
    ['db', spans.db],
    ['provider', spans.provider],
  ] as const) {
    const entries = [...map.entries()].sort((a, b) => sum(b[1]) - sum(a[1]));
    for (const [name, values] of entries) {
      lines.push(
        `  ${`${kind} ${name}`.padEnd(52)} ${(values.length / requests).toFixed(1).padStart(5)} calls  ${(sum(values) / requests).toFixed(2).padStart(8)} ms`,
      );
    }
  }
  spans.db.clear();
  spans.provider.clear();
  return lines.join('\n');
}

/** Runs `fn` with host commands forked from this process (the path before the spawner). */
async function viaServerFork<T>(fn: () => Promise<T>): Promise<T> {
  process.env.SANDCAST_LOCAL_SPAWNER = 'direct';
  try {
    return await fn();
  } finally {
    delete process.env.SANDCAST_LOCAL_SPAWNER;
  }
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');

async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-api-'));
  const raw = PROVIDER === 'null' ? createNullProvider(dataDir) : createLocalProvider({ dataDir });
  /** The forked-from-the-server comparison is the local provider's; the null provider starts no process. */
  const direct = PROVIDER === 'local' ? viaServerFork : async <T>(fn: () => Promise<T>) => fn();
  const availability = await raw.availability();
  if (!availability.available) throw new Error(`the local provider cannot run here: ${availability.reason}`);
  const served: SandboxProvider = SPANS ? timedObject(raw, spans.provider, '') : raw;
  const store = createStore(await createDb({ pglite: DB === 'memory' ? 'memory://' : path.join(dataDir, 'db') }));
  const server = await startServer(
    loadConfig({ SANDCAST_PORT: '0', SANDCAST_SSH_PORT: 'off', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'warn' }),
    { providers: [served], store: SPANS ? timedStore(store) : store },
  );
  // The SDK with its Node transport, and with the default fetch transport beside it.
  const client = new SandcastClient({ baseUrl: server.url, transport: createNodeTransport() });
  const viaFetch = new SandcastClient({ baseUrl: server.url });
  const created: string[] = [];
  try {
    await client.settings.update({ experimental: { enableEnvironments: true } });
    const env = await client.environments.create({ name: 'bench-api-overhead', provider: 'local', config: {} });
    const config = raw.configSchema.parse({});
    const loadAtStart = load();

    // Cold: a new sandbox each round, through the API and straight from the provider.
    const apiCreate: number[] = [];
    const apiFirstExec: number[] = [];
    const apiBoth: number[] = [];
    const rawBoth: number[] = [];
    const rawCreate: number[] = [];
    const apiBothDirect: number[] = [];
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      const keep = i >= WARMUP;
      const old = await direct(() =>
        timed(async () => {
          const id = (await client.sandboxes.create({ environmentId: env.id })).id;
          await client.sandboxes.exec(id, { command: ['true'] });
          created.push(id);
        }),
      );
      await client.sandboxes.delete(created.pop()!);
      if (keep) apiBothDirect.push(old);
      spans.on = keep;
      let createMs = 0;
      let sandboxId = '';
      const both = await timed(async () => {
        createMs = await timed(async () => {
          sandboxId = (await client.sandboxes.create({ environmentId: env.id })).id;
        });
        const t0 = performance.now();
        const out = await client.sandboxes.exec(sandboxId, { command: ['true'] });
        if (out.exitCode !== 0) throw new Error(`true exited ${out.exitCode}: ${out.stderr}`);
        if (keep) apiFirstExec.push(performance.now() - t0);
      });
      spans.on = false;
      await client.sandboxes.delete(sandboxId);
      let instanceId = '';
      const rawMs = await timed(async () => {
        const t0 = performance.now();
        instanceId = (await raw.create({ sandboxId: `bench-raw-${i}`, environmentId: env.id, config })).instanceId;
        if (keep) rawCreate.push(performance.now() - t0);
        const out = await raw.exec(instanceId, { command: ['true'] });
        if (out.exitCode !== 0) throw new Error(`true exited ${out.exitCode}: ${out.stderr}`);
      });
      await raw.destroy(instanceId);
      if (keep) {
        apiCreate.push(createMs);
        apiBoth.push(both);
        rawBoth.push(rawMs);
      }
    }
    const coldSpans = SPANS ? spanReport('create → first exec through the API', ITERATIONS) : '';

    // Warm: one running sandbox, exec `true` again and again.
    const sandbox = await client.sandboxes.create({ environmentId: env.id });
    created.push(sandbox.id);
    const instanceId = (await server.store.repos.sandboxes.get(sandbox.id))!.providerInstanceId!;
    const apiExec: number[] = [];
    const rawExec: number[] = [];
    const apiExecDirect: number[] = [];
    const rawExecDirect: number[] = [];
    const apiExecFetch: number[] = [];
    for (let i = 0; i < WARMUP + EXECS; i++) {
      const keep = i >= WARMUP;
      spans.on = keep;
      const a = await timed(() => client.sandboxes.exec(sandbox.id, { command: ['true'] }));
      spans.on = false;
      const b = await timed(() => raw.exec(instanceId, { command: ['true'] }));
      const c = await direct(() => timed(() => client.sandboxes.exec(sandbox.id, { command: ['true'] })));
      const d = await direct(() => timed(() => raw.exec(instanceId, { command: ['true'] })));
      const e = await timed(() => viaFetch.sandboxes.exec(sandbox.id, { command: ['true'] }));
      if (keep) {
        apiExecFetch.push(e);
        apiExec.push(a);
        rawExec.push(b);
        apiExecDirect.push(c);
        rawExecDirect.push(d);
      }
    }
    const warmSpans = SPANS ? spanReport('exec `true` through the API', EXECS) : '';

    console.log(
      `\nAPI overhead on the ${PROVIDER} provider (PGlite ${DB}), ${ITERATIONS} cold rounds, ${EXECS} execs (+${WARMUP} warm-up each)`,
    );
    console.log(`load average ${loadAtStart} at start, ${load()} at the end\n`);
    // A ratio to a provider that does nothing says nothing: the null provider's figures stand alone.
    const against = (baseline: number[]) => (PROVIDER === 'null' ? undefined : baseline);
    console.log(row('raw provider create → exec true (baseline)', rawBoth));
    console.log(row('API create → first exec true, cold', apiBoth, against(rawBoth)));
    console.log(row('  raw provider create alone (baseline)', rawCreate));
    console.log(row('  API POST /api/sandboxes', apiCreate, against(rawCreate)));
    console.log(row('  API first exec true', apiFirstExec));
    console.log(row('raw provider exec true, running sandbox (baseline)', rawExec));
    console.log(row('API exec true, running sandbox', apiExec, against(rawExec)));
    console.log(row('  the same through the fetch transport', apiExecFetch, against(rawExec)));
    if (PROVIDER === 'local') {
      console.log(`\nthe same with host commands forked from the server process (the path before the spawner)\n`);
      console.log(row('API create → first exec true, via spawner (baseline)', apiBoth));
      console.log(row('API create → first exec true, forked from server', apiBothDirect, apiBoth));
      console.log(row('API exec true, via spawner (baseline)', apiExec));
      console.log(row('API exec true, forked from server', apiExecDirect, apiExec));
      console.log(row('raw provider exec true, via spawner (baseline)', rawExec));
      console.log(row('raw provider exec true, forked from server', rawExecDirect, rawExec));
    }
    const overhead = (api: number[], base: number[]) =>
      `${(percentile(api, 50) - percentile(base, 50)).toFixed(1)} ms (${((percentile(api, 50) / percentile(base, 50) - 1) * 100).toFixed(0)}%)`;
    console.log(`\ncontrol-plane overhead at p50: create → first exec ${overhead(apiBoth, rawBoth)}, exec ${overhead(apiExec, rawExec)}`);
    if (SPANS) console.log(`${coldSpans}\n${warmSpans}`);
  } finally {
    spans.on = false;
    for (const id of created) await client.sandboxes.delete(id).catch(() => undefined);
    await server.close();
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

await main();
