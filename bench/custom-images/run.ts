/**
 * Why custom images exist, measured (ARCHITECTURE §12). From one run, through the real API:
 *  - boot from a captured image → the tools answer, vs install them again: create from the base,
 *    send the missing .debs of a real toolset (git, python3, make, gcc, jq, curl and their dependency
 *    closure; see debs.ts) into the sandbox and dpkg -i them, then the same check;
 *  - create → first exec through the API vs the raw provider call (the control plane's overhead);
 *  - the capture itself.
 * The .deb set is downloaded once per machine on the host with apt; sandboxes need no network.
 * Provider: docker (default) or local (`--provider local`). Bounded loops; cleans up.
 *
 *   npx tsx bench/custom-images/run.ts [--provider docker|local] [--iterations 10] [--installs 3] [--base host|minbase]
 *
 * On local, the built-in `host` base is the host's own /usr: where the host has the tools already,
 * only the missing packages are installed and the saving shown is small; `--base minbase` imports
 * the Docker test image (Debian bookworm minbase) as the local base to measure the whole install.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SandcastClient } from '@sandcast/client';
import { createDb, createStore } from '@sandcast/db';
import { createDockerProvider } from '@sandcast/provider-docker';
import { createLocalProvider } from '@sandcast/provider-local';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { startServer } from '@sandcast/server';
import { benchServerConfig } from '../support/bench-config.ts';
import { row, timed } from '../support/stats.ts';
import { debSet, installDebs, TOOLS, VERIFY } from './debs.ts';

const run = promisify(execFile);
const USAGE = 'usage: npx tsx bench/custom-images/run.ts [--provider docker|local] [--iterations 10] [--installs 3] [--base host|minbase]';
const args = process.argv.slice(2);
if (args.includes('--help')) {
  console.log(USAGE);
  process.exit(0);
}
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const PROVIDER = option('--provider', 'docker');
const ITERATIONS = Math.min(50, Math.max(3, Number(option('--iterations', '10'))));
/** Installing again takes tens of seconds: fewer rounds of it. */
const INSTALLS = Math.min(10, Math.max(1, Number(option('--installs', '3'))));
const DOCKER_IMAGE = process.env.SANDCAST_DOCKER_TEST_IMAGE ?? 'sandcast-test/debian:bookworm';
/**
 * The local provider's base. `host` (the built-in one) shares the host's /usr, which may hold most
 * of the set already; `minbase` imports the Docker test image (`docker save`) into the local store
 * through the API first, so the whole closure is installed.
 */
const LOCAL_BASE = option('--base', 'host');
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');

async function main() {
  const set = await debSet();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-images-'));
  const provider: SandboxProvider = PROVIDER === 'local' ? createLocalProvider({ dataDir }) : createDockerProvider({ dataDir });
  const availability = await provider.availability();
  if (!availability.available) throw new Error(`the ${PROVIDER} provider cannot run here: ${availability.reason}`);
  const config = PROVIDER === 'local' ? (LOCAL_BASE === 'minbase' ? { image: 'bench-minbase' } : {}) : { image: DOCKER_IMAGE };

  const server = await startServer(benchServerConfig(dataDir, { rawRounds: true }), {
    providers: [provider],
    store: createStore(await createDb({ pglite: 'memory://' })),
  });
  const client = new SandcastClient({ baseUrl: server.url });
  let setupId: string | undefined;
  try {
    if (PROVIDER === 'local' && LOCAL_BASE === 'minbase') {
      const archive = (await run('docker', ['save', DOCKER_IMAGE], { encoding: 'buffer', maxBuffer: 4 << 30 })).stdout;
      await client.baseImages.import('local', 'bench-minbase', new Uint8Array(archive));
    }
    await client.settings.update({ experimental: { enableEnvironments: true } });
    const withImage = await client.environments.create({ name: 'bench-image', provider: PROVIDER, config });
    const base = await client.environments.create({ name: 'bench-base', provider: PROVIDER, config });

    const { session } = await client.customImages.startSetup(withImage.id);
    setupId = session.id;
    let sent = { packages: 0, bytes: 0, execs: 0 };
    const setupMs = await timed(async () => {
      sent = await installDebs((body) => client.customImages.exec(session.id, body), set);
    });
    let captured: Awaited<ReturnType<typeof client.customImages.finish>> | undefined;
    const captureMs = await timed(async () => {
      captured = await client.customImages.finish(session.id);
    });
    setupId = undefined;
    const template = captured!.template;

    const fromImage: number[] = [];
    const apiCreateExec: number[] = [];
    const rawCreateExec: number[] = [];
    for (let i = 0; i < ITERATIONS + 1; i++) {
      const measure = i > 0; // the first round warms caches
      const a = await timed(async () => {
        const sandbox = await client.sandboxes.create({ environmentId: withImage.id });
        const out = await client.sandboxes.exec(sandbox.id, { command: VERIFY });
        if (out.exitCode !== 0) throw new Error(`the captured image lacks the tools: ${out.stderr}`);
        void client.sandboxes.delete(sandbox.id).catch(() => undefined);
      });
      const c = await timed(async () => {
        const sandbox = await client.sandboxes.create({ environmentId: base.id });
        await client.sandboxes.exec(sandbox.id, { command: ['true'] });
        void client.sandboxes.delete(sandbox.id).catch(() => undefined);
      });
      const d = await timed(async () => {
        const created = await provider.create({
          sandboxId: `bench-raw-${i}`,
          environmentId: base.id,
          config: provider.configSchema.parse(config),
        });
        await provider.exec(created.instanceId, { command: ['true'] });
        void provider.destroy(created.instanceId).catch(() => undefined);
      });
      if (measure) {
        fromImage.push(a);
        apiCreateExec.push(c);
        rawCreateExec.push(d);
      }
    }
    const loadImages = load();
    const installAgain: number[] = [];
    for (let i = 0; i < INSTALLS; i++) {
      installAgain.push(
        await timed(async () => {
          const sandbox = await client.sandboxes.create({ environmentId: base.id });
          await installDebs((body) => client.sandboxes.exec(sandbox.id, body), set);
          await client.sandboxes.delete(sandbox.id).catch(() => undefined);
        }),
      );
    }
    const loadInstalls = load();

    const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
    console.log(`\ncustom images on the ${PROVIDER} provider, one run: ${ITERATIONS} boots (+1 warm-up), ${INSTALLS} installs again\n`);
    console.log(
      `toolset ${TOOLS.join(', ')}: ${set.debs.length} packages in the closure, ${sent.packages} missing from the base sent (${mib(sent.bytes)} in ${sent.execs} execs)`,
    );
    console.log(
      `setup (send + dpkg -i + check) in the setup sandbox: ${setupMs.toFixed(0)} ms; capture (Finished): ${captureMs.toFixed(0)} ms; ${template.kind} ${template.providerRef}, ${mib(template.sizeBytes ?? 0)}\n`,
    );
    console.log(`${row('base + install .debs again → tools answer (baseline)', installAgain)}   load ${loadInstalls}`);
    console.log(`${row('captured image → first exec: tools answer', fromImage, installAgain)}   load ${loadImages}`);
    console.log('');
    console.log(`${row('raw provider create → first exec (baseline)', rawCreateExec)}   load ${loadImages}`);
    console.log(`${row('API create → first exec (control plane included)', apiCreateExec, rawCreateExec)}   load ${loadImages}`);
    await client.customImages.disable(withImage.id, { deleteProviderTemplate: true }).catch(() => undefined);
  } finally {
    // A setup that failed midway leaves its setup sandbox: cancel it.
    if (setupId) await client.customImages.cancel(setupId).catch(() => undefined);
    await server.reconciler.runOnce().catch(() => undefined);
    await server.close();
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

await main();
// A teardown still settling in the background (a delete, a provider's cleanup) must not keep the run open.
process.exit(0);
