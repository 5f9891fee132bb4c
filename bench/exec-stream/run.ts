/**
 * Live exec output benchmark (ARCHITECTURE §12, issue 18). Prints, from one run, for a command
 * that prints a line, works for a while, then prints its last line:
 *  - time to the first output frame through the API (NDJSON) vs time to the full JSON answer —
 *    the ratio is what a user waiting on a long command gains;
 *  - the same first-output time vs a direct provider call (`execStream`, first chunk) — the
 *    control plane's overhead on first byte;
 *  - throughput of a 256 MiB stream through the API vs straight from the provider.
 * Interleaved iterations, p50 / p95, ratios of the medians.
 *
 *   npx tsx bench/exec-stream/run.ts [--provider local|docker|fake] [--iterations 15] [--work-ms 300]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SandcastClient } from '@sandcast/client';
import { createDb, createStore } from '@sandcast/db';
import { createDockerProvider } from '@sandcast/provider-docker';
import { createFakeProvider } from '@sandcast/provider-fake';
import { createLocalProvider } from '@sandcast/provider-local';
import type { ExecChunk, SandboxProvider } from '@sandcast/provider-sdk';
import { loadConfig, startServer } from '@sandcast/server';
import { percentile } from '../support/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const PROVIDER = option('--provider', 'local');
const ITERATIONS = Math.min(100, Math.max(3, Number(option('--iterations', '15'))));
const WORK_MS = Math.max(50, Number(option('--work-ms', '300')));
const WARMUP = 2;
const MiB = 1024 * 1024;
const FLOOD = 256 * MiB;
const DOCKER_IMAGE = process.env.SANDCAST_DOCKER_TEST_IMAGE ?? 'sandcast-test/debian:bookworm';

/** First line at once, then "work", then the last line. */
const COMMAND = ['sh', '-c', `echo started; sleep ${(WORK_MS / 1000).toFixed(3)}; echo finished`];
const FLOOD_COMMAND = ['sh', '-c', `yes 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde | head -c ${FLOOD}`];

const ms = (n: number) => `${n.toFixed(1)} ms`;
const row = (label: string, values: number[], unit = ms) =>
  `  ${label.padEnd(44)} p50 ${unit(percentile(values, 50)).padStart(12)}   p95 ${unit(percentile(values, 95)).padStart(12)}`;

function providerFor(dataDir: string): { provider: SandboxProvider; config: Record<string, unknown> } {
  switch (PROVIDER) {
    case 'local':
      return { provider: createLocalProvider({ dataDir }), config: {} };
    case 'docker':
      return { provider: createDockerProvider({ dataDir }), config: { image: DOCKER_IMAGE } };
    case 'fake':
      return { provider: createFakeProvider({ dataDir }), config: {} };
    default:
      throw new Error(`--provider takes local, docker or fake; got ${PROVIDER}`);
  }
}

async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-exec-'));
  const { provider, config } = providerFor(dataDir);
  const availability = await provider.availability();
  if (!availability.available) throw new Error(`the ${PROVIDER} provider cannot run here: ${availability.reason}`);
  const server = await startServer(
    loadConfig({ SANDCAST_PORT: '0', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'warn', SANDCAST_SSH_PORT: 'off' }),
    { providers: [provider], store: createStore(await createDb({ pglite: 'memory://' })) },
  );
  const client = new SandcastClient({ baseUrl: server.url });
  let sandboxId: string | null = null;
  try {
    await client.settings.update({ experimental: { enableEnvironments: true } });
    const env = await client.environments.create({ name: 'bench-exec', provider: PROVIDER, config });
    const sandbox = await client.sandboxes.create({ environmentId: env.id });
    sandboxId = sandbox.id;
    const instanceId = (await server.store.repos.sandboxes.get(sandbox.id))!.providerInstanceId!;

    const streamFirst: number[] = [];
    const streamExit: number[] = [];
    const jsonFull: number[] = [];
    const directFirst: number[] = [];
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      const keep = i >= WARMUP;
      // Streamed through the API: first frame, then the exit frame.
      let started = performance.now();
      let first = Number.NaN;
      for await (const frame of client.sandboxes.execStream(sandbox.id, { command: COMMAND })) {
        if (frame.type === 'stdout' && Number.isNaN(first)) first = performance.now() - started;
        if (frame.type === 'exit' && keep) streamExit.push(performance.now() - started);
      }
      if (keep) streamFirst.push(first);
      // The JSON answer: nothing until the command has ended.
      started = performance.now();
      const answer = await client.sandboxes.exec(sandbox.id, { command: COMMAND });
      if (answer.stdout !== 'started\nfinished\n') throw new Error(`unexpected output: ${JSON.stringify(answer.stdout)}`);
      if (keep) jsonFull.push(performance.now() - started);
      // Straight from the provider, no HTTP, no database.
      started = performance.now();
      const running = await provider.execStream(instanceId, { command: COMMAND });
      let direct = Number.NaN;
      for await (const chunk of running.output as AsyncIterable<ExecChunk>) {
        if (Number.isNaN(direct)) direct = performance.now() - started;
        void chunk;
      }
      await running.exit;
      if (keep) directFirst.push(direct);
    }

    // Throughput: 256 MiB through the API (frames parsed by the client) vs from the provider.
    let started = performance.now();
    let apiBytes = 0;
    for await (const frame of client.sandboxes.execStream(sandbox.id, { command: FLOOD_COMMAND, timeoutMs: 600_000 })) {
      if (frame.type === 'stdout') apiBytes += frame.data.length;
    }
    const apiSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    let directBytes = 0;
    const flood = await provider.execStream(instanceId, { command: FLOOD_COMMAND, timeoutMs: 600_000 });
    for await (const chunk of flood.output as AsyncIterable<ExecChunk>) directBytes += chunk.data.length;
    await flood.exit;
    const directSeconds = (performance.now() - started) / 1000;
    if (apiBytes !== FLOOD || directBytes !== FLOOD) throw new Error(`flood sizes: api ${apiBytes}, direct ${directBytes}`);

    const p50 = (values: number[]) => percentile(values, 50);
    console.log(`exec output on the ${PROVIDER} provider — ${ITERATIONS} iterations, command works ${WORK_MS} ms between its lines`);
    console.log(row('first output, streamed through the API', streamFirst));
    console.log(row('exit frame, streamed through the API', streamExit));
    console.log(row('full JSON answer through the API', jsonFull));
    console.log(row('first output, direct provider execStream', directFirst));
    console.log(`  ratio first streamed output / full JSON answer     ${(p50(streamFirst) / p50(jsonFull)).toFixed(3)}`);
    console.log(`  ratio first streamed output / direct provider call ${(p50(streamFirst) / p50(directFirst)).toFixed(2)}`);
    console.log(`  API overhead on first output (p50)                 ${ms(p50(streamFirst) - p50(directFirst))}`);
    const mbps = (bytes: number, seconds: number) => bytes / MiB / seconds;
    console.log(
      `  256 MiB: API stream ${mbps(apiBytes, apiSeconds).toFixed(0)} MiB/s, direct provider ${mbps(directBytes, directSeconds).toFixed(0)} MiB/s, ratio ${(mbps(apiBytes, apiSeconds) / mbps(directBytes, directSeconds)).toFixed(2)}`,
    );
  } finally {
    if (sandboxId) await client.sandboxes.delete(sandboxId).catch(() => undefined);
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
