/**
 * Docker provider benchmark (ARCHITECTURE §12). Prints, from one run:
 *  - create → first exec through the provider vs a raw `docker run --rm --network none IMAGE true`
 *    (p50 / p95 and the provider's overhead as a ratio of the medians);
 *  - capture (`docker commit`) time and stored bytes for 1 MB, 100 MB and 1 GB changes.
 * Bounded loops; everything it creates is removed at the end.
 *
 *   npx tsx bench/docker-provider/run.ts [--iterations 15] [--skip-1g]
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createDockerProvider } from '@sandcast/provider-docker';
import type { TemplateRef } from '@sandcast/provider-sdk';
import { percentile } from '../support/stats.ts';

const IMAGE = process.env.SANDCAST_DOCKER_TEST_IMAGE ?? 'sandcast-test/debian:bookworm';
const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const ITERATIONS = Math.min(100, Math.max(3, option('--iterations', 15)));
const WARMUP = 2;
const MB = 1024 * 1024;
const CAPTURE_SIZES = [
  { label: '1 MB', bytes: 1 * MB, repeats: 3 },
  { label: '100 MB', bytes: 100 * MB, repeats: 3 },
  { label: '1 GB', bytes: 1024 * MB, repeats: 1 },
].filter((s) => !(flag('--skip-1g') && s.bytes > 100 * MB));

const ciSetup = fileURLToPath(new URL('../../packages/providers/docker/scripts/ci-setup.sh', import.meta.url));

const ms = (n: number) => `${n.toFixed(1)} ms`;
const mib = (n: number) => `${(n / MB).toFixed(1)} MiB`;

function run(command: string, argv: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${argv.join(' ')} exited ${code}: ${stderr}`))));
  });
}

async function main(): Promise<void> {
  await promisify(execFile)('bash', [ciSetup, IMAGE], { timeout: 600_000 });
  const provider = createDockerProvider({ dataDir: '/tmp/sandcast-docker-bench' });
  const availability = await provider.availability();
  if (!availability.available) throw new Error(availability.reason);
  const config = { image: IMAGE };
  const environmentId = 'env-bench';
  const cleanup: Array<() => Promise<unknown>> = [];
  const tag = randomBytes(3).toString('hex');

  try {
    // Interleaved so drift on the machine affects both sides alike.
    const viaProvider: number[] = [];
    const withDestroy: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      const startedProvider = performance.now();
      const { instanceId } = await provider.create({ sandboxId: `bench-${tag}-${i}`, environmentId, config });
      const result = await provider.exec(instanceId, { command: ['true'] });
      const providerMs = performance.now() - startedProvider;
      if (result.exitCode !== 0) throw new Error(`first exec failed: ${result.stderr}`);
      await provider.destroy(instanceId);
      const providerWithDestroyMs = performance.now() - startedProvider;

      const startedRaw = performance.now();
      await run('docker', ['run', '--rm', '--network', 'none', IMAGE, 'true']);
      const rawMs = performance.now() - startedRaw;
      if (i >= WARMUP) {
        viaProvider.push(providerMs);
        withDestroy.push(providerWithDestroyMs);
        raw.push(rawMs);
      }
    }
    const p50Provider = percentile(viaProvider, 50);
    const p50Raw = percentile(raw, 50);
    console.log(`\ncreate → first exec (${ITERATIONS} runs each, ${WARMUP} warm-up, image ${IMAGE})`);
    console.log(`  provider (create + start + exec true)   p50 ${ms(p50Provider)}   p95 ${ms(percentile(viaProvider, 95))}`);
    console.log(`  raw docker run --rm --network none true p50 ${ms(p50Raw)}   p95 ${ms(percentile(raw, 95))}`);
    console.log(`  provider / raw (p50 ratio)              ${(p50Provider / p50Raw).toFixed(2)}×`);
    // `docker run --rm` also removes the container before it returns; this line compares like with like.
    const p50WithDestroy = percentile(withDestroy, 50);
    console.log(`  provider incl. destroy                  p50 ${ms(p50WithDestroy)}   p95 ${ms(percentile(withDestroy, 95))}`);
    console.log(`  provider incl. destroy / raw (p50)      ${(p50WithDestroy / p50Raw).toFixed(2)}×`);

    console.log('\ncapture (docker commit of a setup sandbox) vs size of the change');
    console.log('  change    commit p50   commit max   stored layer   engine-measured change');
    for (const size of CAPTURE_SIZES) {
      const times: number[] = [];
      let layer = 0;
      let changed = 0;
      for (let r = 0; r < size.repeats; r++) {
        const setupSessionId = `bench-${tag}-${size.bytes}-${r}`;
        const lease = await provider.startInteractiveSetup({ setupSessionId, environmentId, config, source: null, ttlSeconds: 600 });
        cleanup.push(() => provider.cancelInteractiveSetup(lease.leaseId));
        // Random bytes: nothing along the way can shortcut the copy.
        const wrote = await provider.exec(lease.leaseId, {
          command: ['sh', '-c', `head -c ${size.bytes} /dev/urandom > /workspace/blob && sync`],
          timeoutMs: 300_000,
        });
        if (wrote.exitCode !== 0) throw new Error(`could not write ${size.label}: ${wrote.stderr}`);
        const started = performance.now();
        const template: TemplateRef = await provider.captureTemplate({ leaseId: lease.leaseId, setupSessionId, environmentId });
        times.push(performance.now() - started);
        layer = Number(template.metadata?.layerBytes ?? 0);
        changed = Number(template.metadata?.changedBytes ?? 0);
        await provider.cancelInteractiveSetup(lease.leaseId);
        await provider.deleteTemplate(template);
      }
      console.log(
        `  ${size.label.padEnd(8)}  ${ms(percentile(times, 50)).padStart(11)}  ${ms(Math.max(...times)).padStart(11)}  ${mib(layer).padStart(13)}  ${mib(changed).padStart(12)}   (${size.repeats} run${size.repeats > 1 ? 's' : ''})`,
      );
    }
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    await provider.close?.();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
