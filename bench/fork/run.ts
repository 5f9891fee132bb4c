/**
 * Fork of a sandbox with a large workspace into N copies on the local provider, through the API:
 * the copy path (the source's files copied into a layer) against the clone path (the source's
 * disk file cloned per fork, ADR 0031), two servers side by side, iterations interleaved (ARCHITECTURE
 * §12). Goal: a 1 GB workspace into 4 copies in < 1 s. Each fork is checked to hold the data. Then
 * cold creates on the raw provider: a disk formatted per sandbox against a clone of a blank.
 *
 *   npx tsx bench/fork/run.ts [--iterations 3] [--creates 10]
 *   (env BENCH_FORK_MB, default 1024: workspace size; BENCH_FORK_COUNT, default 4: copies)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SandcastClient } from '@sandcast/client';
import { createDb, createStore } from '@sandcast/db';
import { createLocalProvider, type LocalProvider } from '@sandcast/provider-local';
import { loadConfig, startServer } from '@sandcast/server';
import { row, timed } from '../support/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const ITERATIONS = Math.min(20, Math.max(1, Number(option('--iterations', '3'))));
const CREATES = Math.min(50, Math.max(1, Number(option('--creates', '10'))));
const WORKSPACE_MB = Math.max(1, Number(process.env.BENCH_FORK_MB ?? '1024'));
const COPIES = Math.min(16, Math.max(1, Number(process.env.BENCH_FORK_COUNT ?? '4')));

interface Side {
  provider: LocalProvider;
  client: SandcastClient;
  sourceId: string;
  close(): Promise<void>;
}

/** A server on its own data dir, with a source sandbox whose workspace is filled. */
async function side(diskClones: boolean): Promise<Side> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `sandcast-bench-fork-${diskClones ? 'clone' : 'copy'}-`));
  const provider = createLocalProvider({ dataDir, diskClones, onWarning: (message) => console.log(`(${message.slice(0, 160)}…)`) });
  const availability = await provider.availability();
  if (!availability.available) throw new Error(`the local provider cannot run here: ${availability.reason}`);
  const server = await startServer(
    loadConfig({ SANDCAST_PORT: '0', SANDCAST_SSH_PORT: 'off', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'warn' }),
    { providers: [provider], store: createStore(await createDb({ pglite: 'memory://' })) },
  );
  const client = new SandcastClient({ baseUrl: server.url });
  const close = async () => {
    for (const sandbox of await client.sandboxes.list().catch(() => [])) await client.sandboxes.delete(sandbox.id).catch(() => undefined);
    for (const instance of await provider.listInstances().catch(() => []))
      await provider.destroy(instance.instanceId).catch(() => undefined);
    await server.close();
    await provider.close?.();
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  };
  try {
    await client.settings.update({ experimental: { enableEnvironments: true } });
    const env = await client.environments.create({
      name: 'bench-fork',
      provider: 'local',
      config: { diskMb: Math.max(2048, WORKSPACE_MB * 2 + 512) },
    });
    const source = await client.sandboxes.create({ environmentId: env.id });
    // One large file plus a tree of small ones, as a checked-out project with build output has.
    const fill = await client.sandboxes.exec(source.id, {
      command: [
        'sh',
        '-c',
        `mkdir -p /workspace/src && dd if=/dev/zero of=/workspace/blob bs=1M count=${WORKSPACE_MB} status=none && for i in $(seq 1000); do echo "file $i" > /workspace/src/f$i.txt; done && echo marker > /workspace/marker`,
      ],
      timeoutMs: 600_000,
    });
    if (fill.exitCode !== 0) throw new Error(`filling the workspace failed: ${fill.stderr}`);
    return { provider, client, sourceId: source.id, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** One fork into COPIES through the API; the forks are checked and deleted after the clock stops. */
async function forkOnce(s: Side): Promise<number> {
  let made: string[] = [];
  const ms = await timed(async () => {
    made = (await s.client.sandboxes.fork(s.sourceId, COPIES)).sandboxes.map((f) => f.id);
  });
  for (const id of made) {
    const seen = await s.client.sandboxes.exec(id, { command: ['sh', '-c', 'cat /workspace/marker; stat -c %s /workspace/blob'] });
    if (seen.stdout !== `marker\n${WORKSPACE_MB * 1024 * 1024}\n`) throw new Error(`fork ${id} lacks the workspace: ${seen.stdout}`);
    await s.client.sandboxes.delete(id);
  }
  return ms;
}

/** Raw provider create (returns once the init is ready) with the default 10 GiB disk, then destroy. */
async function createOnce(provider: LocalProvider, n: number): Promise<number> {
  let id = '';
  const ms = await timed(async () => {
    id = (await provider.create({ sandboxId: `bench-create-${n}`, environmentId: 'bench', config: {} })).instanceId;
  });
  await provider.destroy(id);
  return ms;
}

async function main() {
  const copy = await side(false);
  let clone: Side | null = null;
  try {
    clone = await side(true);
    const copyForks: number[] = [];
    const cloneForks: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      copyForks.push(await forkOnce(copy));
      cloneForks.push(await forkOnce(clone));
    }
    // The first clone-path create of a size formats that size's blank once: timed on its own.
    const firstBlank = await createOnce(clone.provider, -1);
    const mkfsCreates: number[] = [];
    const cloneCreates: number[] = [];
    for (let i = 0; i < CREATES; i++) {
      mkfsCreates.push(await createOnce(copy.provider, i));
      cloneCreates.push(await createOnce(clone.provider, i));
    }
    console.log(
      `\nfork on the local provider: a ${WORKSPACE_MB} MiB workspace (+1000 small files) into ${COPIES}, ${ITERATIONS} iterations, one run\n`,
    );
    console.log(row(`copy path: API fork into ${COPIES} (one copy, ${COPIES} mkfs) (baseline)`, copyForks));
    console.log(row(`clone path: API fork into ${COPIES} (${COPIES} disk clones)`, cloneForks, copyForks));
    // The first fork after the fill also writes the fill back through the loop devices (the freeze).
    const each = (values: number[]) => values.map((ms) => ms.toFixed(0)).join(', ');
    console.log(`each iteration, ms: copy path ${each(copyForks)}; clone path ${each(cloneForks)}`);
    console.log(`\ncold create on the raw provider, default 10 GiB disk, ${CREATES} iterations\n`);
    console.log(row('create, disk formatted with mkfs.ext4 (baseline)', mkfsCreates));
    console.log(row('create, disk cloned from a blank', cloneCreates, mkfsCreates));
    console.log(`first clone-path create of the size (formats its blank once): ${firstBlank.toFixed(1)} ms`);
  } finally {
    await clone?.close();
    await copy.close();
  }
}

await main();
