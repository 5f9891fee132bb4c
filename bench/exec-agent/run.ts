/**
 * The local provider's exec agent (ADR 0030, issue 16: exec of `true` in a running sandbox,
 * p50 < 15 ms through the API). One running sandbox, interleaved in one run:
 *  - the raw provider's exec `true` the old way, a new `sh → nsenter → bwrap` per command
 *    (SANDCAST_LOCAL_EXEC_AGENT=off, read per call: baseline), against the same through the agent;
 *  - `POST …/exec` of `true` through the API, old way (baseline) against through the agent;
 *  - exec of `cat` with 1 MiB of stdin and its echo, both ways (the frames' throughput).
 * Bounded loops; cleans up.
 *
 *   npx tsx bench/exec-agent/run.ts [--execs 60]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { SandcastClient } from '@sandcast/client';
import { createDb, createStore } from '@sandcast/db';
import { createLocalProvider } from '@sandcast/provider-local';
import { loadConfig, startServer } from '@sandcast/server';
import { row, timed } from '../support/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const EXECS = Math.min(500, Math.max(5, Number(option('--execs', '60'))));
const WARMUP = 3;
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');

/** Runs `fn` with every exec started the old way. */
async function oldPath<T>(fn: () => Promise<T>): Promise<T> {
  process.env.SANDCAST_LOCAL_EXEC_AGENT = 'off';
  try {
    return await fn();
  } finally {
    delete process.env.SANDCAST_LOCAL_EXEC_AGENT;
  }
}

async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-agent-'));
  const raw = createLocalProvider({ dataDir });
  const availability = await raw.availability();
  if (!availability.available) throw new Error(`the local provider cannot run here: ${availability.reason}`);
  const store = createStore(await createDb({ pglite: path.join(dataDir, 'db') }));
  const server = await startServer(
    loadConfig({ SANDCAST_PORT: '0', SANDCAST_SSH_PORT: 'off', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'warn' }),
    { providers: [raw], store },
  );
  const client = new SandcastClient({ baseUrl: server.url });
  let sandboxId: string | null = null;
  try {
    await client.settings.update({ experimental: { enableEnvironments: true } });
    const env = await client.environments.create({ name: 'bench-exec-agent', provider: 'local', config: {} });
    sandboxId = (await client.sandboxes.create({ environmentId: env.id })).id;
    const instanceId = (await server.store.repos.sandboxes.get(sandboxId))!.providerInstanceId!;
    const id = sandboxId;
    const loadAtStart = load();
    const check = (out: { exitCode: number; stderr: string }) => {
      if (out.exitCode !== 0) throw new Error(`exited ${out.exitCode}: ${out.stderr}`);
    };
    const rawTrue = async () => check(await raw.exec(instanceId, { command: ['true'] }));
    const apiTrue = async () => check(await client.sandboxes.exec(id, { command: ['true'] }));
    const mib = Buffer.alloc(1024 * 1024, 'x');
    const rawCat = async () => {
      const out = await raw.exec(instanceId, { command: ['cat'], stdin: mib });
      check(out);
      if (out.stdout.length !== mib.length) throw new Error(`cat echoed ${out.stdout.length} bytes`);
    };
    const series = { rawOld: [], rawAgent: [], apiOld: [], apiAgent: [], catOld: [], catAgent: [] } as Record<string, number[]>;
    for (let i = 0; i < WARMUP + EXECS; i++) {
      const figures = {
        rawOld: await oldPath(() => timed(rawTrue)),
        rawAgent: await timed(rawTrue),
        apiOld: await oldPath(() => timed(apiTrue)),
        apiAgent: await timed(apiTrue),
        catOld: i % 4 === 0 ? await oldPath(() => timed(rawCat)) : null,
        catAgent: i % 4 === 0 ? await timed(rawCat) : null,
      };
      if (i < WARMUP) continue;
      for (const [key, value] of Object.entries(figures)) if (value !== null) series[key]!.push(value);
    }
    const s = (key: string) => series[key]!;
    console.log(`\nexec through the local provider's exec agent vs the old path, one running sandbox, ${EXECS} execs (+${WARMUP} warm-up)`);
    console.log(`load average ${loadAtStart} at start, ${load()} at the end\n`);
    console.log(row('raw provider exec true, old path (baseline)', s('rawOld')));
    console.log(row('raw provider exec true, through the agent', s('rawAgent'), s('rawOld')));
    console.log(row('API exec true, old path (baseline)', s('apiOld')));
    console.log(row('API exec true, through the agent', s('apiAgent'), s('apiOld')));
    console.log(row('raw provider exec cat of 1 MiB stdin, old path (baseline)', s('catOld')));
    console.log(row('raw provider exec cat of 1 MiB stdin, through the agent', s('catAgent'), s('catOld')));
  } finally {
    if (sandboxId) await client.sandboxes.delete(sandboxId).catch(() => undefined);
    await server.close();
    await raw.close?.();
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

await main();
