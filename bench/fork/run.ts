/**
 * Fork of a sandbox with a large workspace into N copies on the local provider, through the API,
 * against `cp -a` of the same workspace (its upper dir on the host) in the same run (ARCHITECTURE
 * §12). Goal: a 1 GB workspace into 4 copies in < 1 s. Each fork is checked to hold the data.
 *
 *   npx tsx bench/fork/run.ts [--iterations 3]
 *   (env BENCH_FORK_MB, default 1024: workspace size; BENCH_FORK_COUNT, default 4: copies)
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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
const ITERATIONS = Math.min(20, Math.max(1, Number(option('--iterations', '3'))));
const WORKSPACE_MB = Math.max(1, Number(process.env.BENCH_FORK_MB ?? '1024'));
const COPIES = Math.min(16, Math.max(1, Number(process.env.BENCH_FORK_COUNT ?? '4')));

async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-fork-'));
  const provider = createLocalProvider({ dataDir });
  const availability = await provider.availability();
  if (!availability.available) throw new Error(`the local provider cannot run here: ${availability.reason}`);
  const server = await startServer(
    loadConfig({ SANDCAST_PORT: '0', SANDCAST_SSH_PORT: 'off', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'warn' }),
    { providers: [provider], store: createStore(await createDb({ pglite: 'memory://' })) },
  );
  const client = new SandcastClient({ baseUrl: server.url });
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
    const record = JSON.parse(
      await readFile(
        path.join(
          dataDir,
          'providers/local/instances',
          (await server.store.repos.sandboxes.get(source.id))!.providerInstanceId!,
          'instance.json',
        ),
        'utf8',
      ),
    ) as { id: string };
    const upperWorkspace = path.join(dataDir, 'providers/local/instances', record.id, 'disk/upper/workspace');

    const forks: number[] = [];
    const copies: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      let made: string[] = [];
      forks.push(
        await timed(async () => {
          made = (await client.sandboxes.fork(source.id, COPIES)).sandboxes.map((s) => s.id);
        }),
      );
      for (const id of made) {
        const seen = await client.sandboxes.exec(id, { command: ['sh', '-c', 'cat /workspace/marker; stat -c %s /workspace/blob'] });
        if (seen.stdout !== `marker\n${WORKSPACE_MB * 1024 * 1024}\n`) throw new Error(`fork ${id} lacks the workspace: ${seen.stdout}`);
        await client.sandboxes.delete(id);
      }
      const target = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-cp-'));
      copies.push(await timed(async () => execFileSync('cp', ['-a', '--', upperWorkspace, target])));
      await rm(target, { recursive: true, force: true });
    }

    console.log(
      `\nfork on the local provider: a ${WORKSPACE_MB} MiB workspace (+1000 small files) into ${COPIES}, ${ITERATIONS} iterations, one run\n`,
    );
    console.log(row('cp -a of the workspace, once (baseline)', copies));
    console.log(row(`API fork into ${COPIES} (freeze, one copy, ${COPIES} boots)`, forks, copies));
  } finally {
    for (const sandbox of await client.sandboxes.list().catch(() => [])) await client.sandboxes.delete(sandbox.id).catch(() => undefined);
    for (const instance of await provider.listInstances().catch(() => []))
      await provider.destroy(instance.instanceId).catch(() => undefined);
    await server.close();
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

await main();
