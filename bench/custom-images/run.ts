/**
 * Why custom images exist, measured (ARCHITECTURE §12). From one run, through the real API:
 *  - boot from a captured image → first exec, vs boot from the base and run the same setup script;
 *  - create → first exec through the API vs the raw provider call (the control plane's overhead);
 *  - the capture itself.
 * Provider: docker (default) or local (`--provider local`). Bounded loops; cleans up.
 *
 *   npx tsx bench/custom-images/run.ts [--provider docker|local] [--iterations 10]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SandcastClient } from '@sandcast/client';
import { createDb, createStore } from '@sandcast/db';
import { createDockerProvider } from '@sandcast/provider-docker';
import { createLocalProvider } from '@sandcast/provider-local';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { loadConfig, startServer } from '@sandcast/server';
import { row, timed } from '../support/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const PROVIDER = option('--provider', 'docker');
const ITERATIONS = Math.min(50, Math.max(3, Number(option('--iterations', '10'))));
const DOCKER_IMAGE = process.env.SANDCAST_DOCKER_TEST_IMAGE ?? 'sandcast-test/debian:bookworm';

/** A stand-in for installing tools: many small files, a 50 MB artefact, a checksum. No network. */
const SETUP_SCRIPT =
  'mkdir -p /opt/tool && i=0; while [ $i -lt 3000 ]; do echo "file $i" > /opt/tool/f$i; i=$((i+1)); done; ' +
  'head -c 52428800 /dev/urandom > /opt/tool/blob && sha256sum /opt/tool/blob > /opt/tool/ready';
const CHECK = ['sh', '-c', 'test -s /opt/tool/ready && echo ready'];

async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-images-'));
  const providers: SandboxProvider[] = PROVIDER === 'local' ? [createLocalProvider({ dataDir })] : [createDockerProvider({ dataDir })];
  const provider = providers[0]!;
  const availability = await provider.availability();
  if (!availability.available) throw new Error(`the ${PROVIDER} provider cannot run here: ${availability.reason}`);
  const config = PROVIDER === 'local' ? {} : { image: DOCKER_IMAGE };

  const server = await startServer(
    loadConfig({ SANDCAST_PORT: '0', SANDCAST_SSH_PORT: '0', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'warn' }),
    {
      providers,
      store: createStore(await createDb({ pglite: 'memory://' })),
    },
  );
  const client = new SandcastClient({ baseUrl: server.url });
  try {
    await client.settings.update({ experimental: { enableEnvironments: true } });
    const withImage = await client.environments.create({ name: 'bench-image', provider: PROVIDER, config });
    const base = await client.environments.create({ name: 'bench-base', provider: PROVIDER, config });

    const { session } = await client.customImages.startSetup(withImage.id);
    const setupMs = await timed(() => client.customImages.exec(session.id, { command: ['sh', '-c', SETUP_SCRIPT], timeoutMs: 300_000 }));
    let captured: Awaited<ReturnType<typeof client.customImages.finish>> | undefined;
    const captureMs = await timed(async () => {
      captured = await client.customImages.finish(session.id);
    });
    const template = captured!.template;

    const fromImage: number[] = [];
    const baseAndSetup: number[] = [];
    const apiCreateExec: number[] = [];
    const rawCreateExec: number[] = [];
    for (let i = 0; i < ITERATIONS + 1; i++) {
      const measure = i > 0; // the first round warms caches
      const a = await timed(async () => {
        const sandbox = await client.sandboxes.create({ environmentId: withImage.id });
        const out = await client.sandboxes.exec(sandbox.id, { command: CHECK });
        if (out.stdout.trim() !== 'ready') throw new Error(`the captured image lacks the setup: ${out.stderr}`);
        void client.sandboxes.delete(sandbox.id);
      });
      const b = await timed(async () => {
        const sandbox = await client.sandboxes.create({ environmentId: base.id });
        await client.sandboxes.exec(sandbox.id, { command: ['sh', '-c', SETUP_SCRIPT], timeoutMs: 300_000 });
        void client.sandboxes.delete(sandbox.id);
      });
      const c = await timed(async () => {
        const sandbox = await client.sandboxes.create({ environmentId: base.id });
        await client.sandboxes.exec(sandbox.id, { command: ['true'] });
        void client.sandboxes.delete(sandbox.id);
      });
      const d = await timed(async () => {
        const created = await provider.create({
          sandboxId: `bench-raw-${i}`,
          environmentId: base.id,
          config: provider.configSchema.parse(config),
        });
        await provider.exec(created.instanceId, { command: ['true'] });
        void provider.destroy(created.instanceId);
      });
      if (measure) {
        fromImage.push(a);
        baseAndSetup.push(b);
        apiCreateExec.push(c);
        rawCreateExec.push(d);
      }
    }

    console.log(`\ncustom images on the ${PROVIDER} provider, ${ITERATIONS} iterations (+1 warm-up), one run\n`);
    console.log(
      `setup script in the setup sandbox: ${setupMs.toFixed(0)} ms; capture (Finished): ${captureMs.toFixed(0)} ms; ${template.kind} ${template.providerRef}, ${((template.sizeBytes ?? 0) / 1048576).toFixed(1)} MiB\n`,
    );
    console.log(row('base + setup script → ready (baseline)', baseAndSetup));
    console.log(row('captured image → first exec sees the setup', fromImage, baseAndSetup));
    console.log('');
    console.log(row('raw provider create → first exec (baseline)', rawCreateExec));
    console.log(row('API create → first exec (control plane included)', apiCreateExec, rawCreateExec));
    await client.customImages.disable(withImage.id, { deleteProviderTemplate: true }).catch(() => undefined);
  } finally {
    await server.reconciler.runOnce().catch(() => undefined);
    await server.close();
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

await main();
