/**
 * Recovery after compute loss (issue 13): a session on a `checkpointed` environment, a workspace
 * of a few hundred files written through the session, then rounds of killing its compute from
 * outside Sandcast (local: SIGKILL to the namespace's init; Docker: `docker rm -f`) and timing the
 * next session exec of `true` — it answers only once new compute is up from the pinned image, the
 * last checkpoint is restored onto it and bootstrap has been replayed. The baseline is the same
 * exec on healthy compute, measured in the same run on the same session (it pays the same
 * post-operation checkpoint). The server-side share of a recovery comes from its activity: from
 * `sandbox.instance_lost` (the fence) to `sandbox.recovered`. Bounded loops; cleans up.
 *
 *   npx tsx bench/recovery/run.ts [--provider local|docker] [--iterations 10] [--workspace-mb 64]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SandcastClient } from '@sandcast/client';
import { createDb, createStore } from '@sandcast/db';
import { createDockerProvider } from '@sandcast/provider-docker';
import { createLocalProvider } from '@sandcast/provider-local';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { loadConfig, startServer } from '@sandcast/server';
import { row } from '../support/stats.ts';

const run = promisify(execFile);
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const PROVIDER = option('--provider', 'local');
const ITERATIONS = Math.min(50, Math.max(1, Number(option('--iterations', '10'))));
const WORKSPACE_MB = Math.min(4096, Math.max(1, Number(option('--workspace-mb', '64'))));
const FILES = 256;
const DOCKER_IMAGE = process.env.SANDCAST_DOCKER_TEST_IMAGE ?? 'sandcast-test/debian:bookworm';

const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');

/** Takes the compute away behind Sandcast's back, as the OOM killer, an operator or a lost host would. */
function killer(dataDir: string): (instanceId: string) => Promise<void> {
  if (PROVIDER === 'docker') {
    return async (instanceId) => {
      await run('docker', ['rm', '-f', instanceId]);
    };
  }
  return async (instanceId) => {
    const recordPath = path.join(dataDir, 'providers', 'local', 'instances', instanceId, 'instance.json');
    const record = JSON.parse(await readFile(recordPath, 'utf8')) as { initPid: number };
    process.kill(record.initPid, 'SIGKILL');
    // Time from compute that is gone, not from one whose init is still exiting: while it exits its
    // namespaces are already closed but its pid still reads alive, and an exec in that window fails
    // with nsenter's error instead of recovering.
    for (let waited = 0; !(await gone(record.initPid)); waited += 10) {
      if (waited > 10_000) throw new Error(`init ${record.initPid} still runs 10 s after SIGKILL`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
}

/** Whether `pid` has exited (no such process, or a zombie). */
async function gone(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return true;
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  return state === 'Z' || state === 'X';
}

async function instanceOf(provider: SandboxProvider, sandboxId: string): Promise<string> {
  const found = (await provider.listInstances()).filter((i) => i.ownerId === sandboxId);
  if (found.length !== 1) throw new Error(`expected one instance for sandbox ${sandboxId}, found ${found.length}`);
  return found[0]!.instanceId;
}

async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-recovery-'));
  const provider: SandboxProvider = PROVIDER === 'docker' ? createDockerProvider({ dataDir }) : createLocalProvider({ dataDir });
  const availability = await provider.availability();
  if (!availability.available) throw new Error(`the ${PROVIDER} provider cannot run here: ${availability.reason}`);
  // The local disk has room for the workspace and for what a restore writes next to it.
  const config = PROVIDER === 'docker' ? { image: DOCKER_IMAGE } : { diskMb: Math.max(256, WORKSPACE_MB * 3) };
  const kill = killer(dataDir);

  const server = await startServer(
    loadConfig({ SANDCAST_PORT: '0', SANDCAST_SSH_PORT: '0', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'warn' }),
    {
      providers: [provider],
      store: createStore(await createDb({ pglite: 'memory://' })),
    },
  );
  const client = new SandcastClient({ baseUrl: server.url });
  let sessionId: string | null = null;
  try {
    await client.settings.update({ experimental: { enableEnvironments: true } });
    const env = await client.environments.create({
      name: 'bench-recovery',
      provider: PROVIDER,
      config,
      spec: { durability: 'checkpointed', bootstrap: ['mkdir -p /opt/boot && date +%s >> /opt/boot/runs'] },
    });
    const agent = await client.agents.create({
      name: 'bench-recovery-agent',
      sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
    });
    const session = await client.sessions.start({ agentId: agent.id });
    sessionId = session.id;
    const sandboxId = session.primarySandboxId;
    if (!sandboxId) throw new Error('the session has no primary sandbox');

    // The workspace: FILES files of random bytes (nothing for compression to win), in 16 directories.
    const kib = Math.max(1, Math.floor((WORKSPACE_MB * 1024) / FILES));
    const wrote = await client.sessions.exec(session.id, {
      command: [
        'sh',
        '-c',
        `i=0; while [ $i -lt ${FILES} ]; do d=/workspace/data/d$((i % 16)); mkdir -p $d; ` +
          `head -c ${kib * 1024} /dev/urandom > $d/f$i.bin || exit 1; i=$((i + 1)); done; du -sk /workspace | cut -f1`,
      ],
    });
    if (wrote.exitCode !== 0) throw new Error(`writing the workspace exited ${wrote.exitCode}: ${wrote.stderr}`);
    const workspaceKib = Number(wrote.stdout.trim());
    const checkpoints = (await client.sessions.checkpoints(session.id)).checkpoints;
    if (checkpoints.length === 0) throw new Error('the checkpointed environment took no checkpoint after the workspace was written');

    const healthy: number[] = [];
    const recovering: number[] = [];
    const serverSide: number[] = [];
    const exec = () => client.sessions.exec(session.id, { command: ['true'] });
    /** One exec of `true`, its answer and how long it took. */
    const timedExec = async () => {
      const start = performance.now();
      const answer = await exec();
      return { answer, ms: performance.now() - start };
    };
    // One warm-up exec on healthy compute.
    await exec();
    let generation = (await client.sessions.sandbox(session.id)).generation;
    for (let i = 0; i < ITERATIONS; i++) {
      const before = await timedExec();
      if (before.answer.exitCode !== 0 || before.answer.recovered) {
        throw new Error(`exec on healthy compute: ${JSON.stringify(before.answer)}`);
      }
      healthy.push(before.ms);

      await kill(await instanceOf(provider, sandboxId));
      const { answer, ms } = await timedExec();
      recovering.push(ms);
      const recovered = answer.recovered;
      if (!recovered) throw new Error(`round ${i + 1}: the exec after the compute was killed did not recover: ${JSON.stringify(answer)}`);
      if (answer.exitCode !== 0 || recovered.fromGeneration !== generation || recovered.toGeneration !== generation + 1) {
        throw new Error(`round ${i + 1}: unexpected recovery from generation ${generation}: ${JSON.stringify(answer)}`);
      }
      if (!recovered.checkpointId || !recovered.processStateLost) throw new Error(`round ${i + 1}: recovered without a checkpoint`);

      const lost = await client.activity({ action: 'sandbox.instance_lost', limit: 500 });
      const back = await client.activity({ action: 'sandbox.recovered', limit: 500 });
      const fenced = lost.find((a) => a.subjectId === sandboxId && a.details.generation === generation);
      const done = back.find((a) => a.subjectId === sandboxId && a.details.toGeneration === generation + 1);
      if (fenced && done) serverSide.push(Date.parse(done.createdAt) - Date.parse(fenced.createdAt));
      generation += 1;
    }

    const files = await client.sessions.exec(session.id, { command: ['sh', '-c', 'find /workspace/data -type f | wc -l'] });
    if (Number(files.stdout.trim()) !== FILES)
      throw new Error(`after ${ITERATIONS} recoveries the workspace has ${files.stdout.trim()} files`);

    console.log(
      `\nrecovery after compute loss on the ${PROVIDER} provider, ${ITERATIONS} kills (+1 warm-up exec), one run; ` +
        `workspace ${(workspaceKib / 1024).toFixed(1)} MiB in ${FILES} files; load average ${load()}\n`,
    );
    console.log(row('session exec true on healthy compute (baseline)', healthy));
    console.log(row('compute killed → next session exec true (recovered)', recovering, healthy));
    if (serverSide.length === ITERATIONS) {
      console.log(row('  of which fence → recovered, per the activity', serverSide));
    } else {
      console.log(`  (the activity gave the fence → recovered span for ${serverSide.length} of ${ITERATIONS} rounds; not shown)`);
    }
    console.log('\nthe restore alone is not reported separately: neither the answer nor the activity times it');
  } finally {
    if (sessionId) await client.sessions.end(sessionId).catch(() => undefined);
    await server.reconciler.runOnce().catch(() => undefined);
    await server.close();
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

await main();
