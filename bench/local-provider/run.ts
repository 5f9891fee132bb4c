/**
 * Local provider benchmark (ARCHITECTURE §12): create → first exec against the runtime invoked
 * directly (the floor) and `docker run --network none` of the same rootfs, and capture time for
 * 1 MB / 100 MB / 1 GB changes against `docker commit` of the same change. Figures are printed as
 * medians, p95 and ratios against baselines measured in this same run.
 *
 * `--phases` also prints where a create's time goes: the provider's own step timings (ADR 0034),
 * p50 over the iterations, and the create call and first exec as the caller sees them.
 *
 *   npx tsx bench/local-provider/run.ts [--iterations 30] [--no-docker] [--max-mb 1024] [--phases]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createLocalProvider } from '@sandcast/provider-local';
import { percentile } from '../support/stats.ts';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const ITERATIONS = Math.min(200, flag('--iterations', 30));
const MAX_MB = flag('--max-mb', 1024);
const PREFIX = 'sandcast-local-bench';
const PHASES = args.includes('--phases');
/** Step timings of the sandbox starts being measured (only while `recording`). */
const phases = new Map<string, number[]>();
let recording = false;
const onPhase = (phase: string, ms: number) => {
  if (!recording) return;
  const samples = phases.get(phase) ?? [];
  samples.push(ms);
  phases.set(phase, samples);
};

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
const now = () => performance.now();

function dockerWorks(): boolean {
  if (args.includes('--no-docker')) return false;
  return spawnSync('docker', ['info'], { stdio: 'ignore' }).status === 0;
}

/** dash, dd, sleep and their libraries: a rootfs both runtimes can boot without a download. */
function buildRootfs(dir: string): void {
  const binaries = { '/usr/bin/dash': 'bin/sh', '/usr/bin/dd': 'bin/dd', '/usr/bin/sleep': 'bin/sleep', '/usr/bin/true': 'bin/true' };
  for (const [source, target] of Object.entries(binaries)) {
    mkdirSync(join(dir, dirname(target)), { recursive: true });
    copyFileSync(source, join(dir, target));
    for (const line of execFileSync('ldd', [source], { encoding: 'utf8' }).split('\n')) {
      const lib = /(\/\S+)\s+\(0x/.exec(line)?.[1];
      if (!lib) continue;
      mkdirSync(join(dir, dirname(lib)), { recursive: true });
      copyFileSync(lib, join(dir, lib));
    }
  }
  for (const sub of ['proc', 'dev', 'tmp', 'workspace', 'etc', 'sys']) mkdirSync(join(dir, sub), { recursive: true });
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), `${PREFIX}-`));
  const provider = createLocalProvider({ dataDir: join(work, 'data'), ...(PHASES ? { onPhase } : {}) });
  const availability = await provider.availability();
  if (!availability.available) {
    console.log(`local provider unavailable: ${availability.reason}`);
    return;
  }
  const docker = dockerWorks();
  const dockerImage = `${PREFIX}-mini:latest`;
  const containers: string[] = [];
  const config = { image: 'host', cpu: 1, memoryMb: 2048, pidsLimit: 512, network: 'none' as const, env: {}, workdir: '/workspace' };
  try {
    const rootfs = join(work, 'rootfs');
    buildRootfs(rootfs);
    execFileSync('tar', ['-C', rootfs, '-cf', join(work, 'rootfs.tar'), '.']);
    await provider.images.importRootfs(join(work, 'rootfs.tar'), 'bench-mini');
    if (docker) execFileSync('docker', ['import', join(work, 'rootfs.tar'), dockerImage], { stdio: 'ignore' });
    const mini = { ...config, image: 'bench-mini' };

    // Warm-up: the built-in base is created on first use.
    await provider.destroy((await provider.create({ sandboxId: 'warm', environmentId: 'bench', config })).instanceId);

    const createToExec = async (cfg: typeof config) => {
      const samples: number[] = [];
      for (let i = 0; i < ITERATIONS; i++) {
        recording = true;
        const started = now();
        const { instanceId } = await provider.create({ sandboxId: `bench-${i}`, environmentId: 'bench', config: cfg });
        const created = now();
        const result = await provider.exec(instanceId, { command: ['true'] });
        const done = now();
        samples.push(done - started);
        onPhase('(create call)', created - started);
        onPhase('(first exec call)', done - created);
        recording = false;
        if (result.exitCode !== 0) throw new Error(`exec failed: ${result.stderr}`);
        await provider.destroy(instanceId);
      }
      return samples;
    };
    const localHost = await createToExec(config);
    const hostPhases = new Map(phases);
    phases.clear();
    const localMini = await createToExec(mini);
    const miniPhases = new Map(phases);

    // The floor: bwrap invoked directly on an already mounted rootfs (no overlay mount, no cgroups).
    const floor: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const started = now();
      const r = spawnSync('bwrap', [
        '--bind',
        rootfs,
        '/',
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        '--unshare-all',
        '--cap-drop',
        'ALL',
        '/bin/true',
      ]);
      floor.push(now() - started);
      if (r.status !== 0) throw new Error(`bwrap failed: ${r.stderr}`);
    }
    const dockerRun: number[] = [];
    if (docker) {
      for (let i = 0; i < Math.min(ITERATIONS, 20); i++) {
        const started = now();
        execFileSync('docker', ['run', '--rm', '--network', 'none', dockerImage, '/bin/true']);
        dockerRun.push(now() - started);
      }
    }

    console.log(`\ncreate → first exec (${ITERATIONS} iterations; docker ${docker ? `${dockerRun.length} iterations` : 'not available'})`);
    const floorP50 = percentile(floor, 50);
    const rows: Array<[string, number[]]> = [
      ['runtime floor: bwrap /bin/true', floor],
      ['local, built-in host base', localHost],
      ['local, imported mini rootfs', localMini],
    ];
    if (docker) rows.push(['docker run --network none (same rootfs)', dockerRun]);
    for (const [name, samples] of rows) {
      const p50 = percentile(samples, 50);
      const vsDocker = docker ? `  ×docker ${(p50 / percentile(dockerRun, 50)).toFixed(2)}` : '';
      console.log(
        `  ${name.padEnd(42)} p50 ${fmt(p50).padStart(9)}  p95 ${fmt(percentile(samples, 95)).padStart(9)}  ×floor ${(p50 / floorP50).toFixed(2)}${vsDocker}`,
      );
    }

    if (PHASES) {
      console.log('\nwhere a create → first exec goes (p50 per step; side-by-side steps overlap)');
      console.log(`  ${'step'.padEnd(22)} ${'host base'.padStart(10)} ${'mini rootfs'.padStart(12)}`);
      for (const name of new Set([...hostPhases.keys(), ...miniPhases.keys()])) {
        const cell = (map: Map<string, number[]>) => {
          const samples = map.get(name);
          return samples ? fmt(percentile(samples, 50)) : '-';
        };
        console.log(`  ${name.padEnd(22)} ${cell(hostPhases).padStart(10)} ${cell(miniPhases).padStart(12)}`);
      }
    }

    console.log('\ncapture time vs size of the change (one capture each)');
    for (const mb of [1, 100, 1024].filter((size) => size <= MAX_MB)) {
      const lease = await provider.startInteractiveSetup({
        setupSessionId: `bench-${mb}`,
        environmentId: 'bench',
        config: mini,
        source: null,
        ttlSeconds: 600,
      });
      const wrote = await provider.exec(lease.leaseId, {
        command: ['dd', 'if=/dev/zero', 'of=/workspace/blob', 'bs=1M', `count=${mb}`],
        timeoutMs: 120_000,
      });
      if (wrote.exitCode !== 0) throw new Error(`dd failed: ${wrote.stderr}`);
      const started = now();
      const template = await provider.captureTemplate({ leaseId: lease.leaseId, setupSessionId: `bench-${mb}`, environmentId: 'bench' });
      const captureMs = now() - started;
      let dockerMs: number | null = null;
      if (docker) {
        const name = `${PREFIX}-c${mb}-${process.pid}`;
        containers.push(name);
        execFileSync(
          'docker',
          [
            'run',
            '-d',
            '--name',
            name,
            '--network',
            'none',
            dockerImage,
            '/bin/sh',
            '-c',
            `dd if=/dev/zero of=/workspace/blob bs=1M count=${mb} 2>/dev/null; : > /done; sleep 600`,
          ],
          { stdio: 'ignore' },
        );
        for (let i = 0; i < 600 && spawnSync('docker', ['exec', name, '/bin/sh', '-c', 'test -e /done']).status !== 0; i++)
          await new Promise((r) => setTimeout(r, 200));
        const committed = now();
        execFileSync('docker', ['commit', name, `${PREFIX}-commit-${mb}:latest`], { stdio: 'ignore' });
        dockerMs = now() - committed;
        execFileSync('docker', ['rm', '-f', name], { stdio: 'ignore' });
        execFileSync('docker', ['rmi', '-f', `${PREFIX}-commit-${mb}:latest`], { stdio: 'ignore' });
      }
      const vs = dockerMs === null ? '' : `  docker commit ${fmt(dockerMs).padStart(10)}  ×docker ${(captureMs / dockerMs).toFixed(3)}`;
      console.log(`  ${`${mb} MB`.padEnd(8)} local capture ${fmt(captureMs).padStart(9)} (${template.sizeBytes} bytes)${vs}`);
      await provider.deleteTemplate(template);
    }
  } finally {
    for (const instance of await provider.listInstances()) await provider.destroy(instance.instanceId);
    await provider.close?.();
    for (const name of containers) spawnSync('docker', ['rm', '-f', name], { stdio: 'ignore' });
    // `docker run --rm` removes its containers asynchronously; retry until the image is free.
    for (let i = 0; docker && i < 20 && spawnSync('docker', ['rmi', dockerImage], { stdio: 'ignore' }).status !== 0; i++) {
      await new Promise((r) => setTimeout(r, 500));
    }
    if (docker) spawnSync('docker', ['rmi', '-f', dockerImage], { stdio: 'ignore' });
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
