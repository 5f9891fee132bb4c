/**
 * `npm run bench`: runs every benchmark one after another with report-sized arguments and writes
 * bench/REPORT.md — the machine, the commit, the load, and each benchmark's printout (each figure
 * there carries its own baseline from the same run and the ratio to it).
 *
 *   npx tsx bench/report.ts [--only name,name] [--out bench/REPORT.md]
 *
 * A benchmark that fails is reported with its exit code and output; the others still run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Benchmark {
  name: string;
  /** What it compares, in one line. */
  what: string;
  args: string[];
}

/** Every bench/<name>/run.ts, with the arguments the report uses (smaller than their defaults where a run is long). */
const BENCHMARKS: Benchmark[] = [
  { name: 'custom-images', what: 'boot from a captured image vs base + setup; API vs raw provider (Docker)', args: ['--iterations', '5'] },
  {
    name: 'sessions',
    what: 'session start → first exec vs raw provider create → exec (local)',
    args: ['--provider', 'local', '--iterations', '20'],
  },
  {
    name: 'sessions',
    what: 'session start → first exec vs raw provider create → exec (Docker)',
    args: ['--provider', 'docker', '--iterations', '10'],
  },
  {
    name: 'local-provider',
    what: 'local provider create → exec vs bwrap floor and docker run; capture',
    args: ['--iterations', '15', '--max-mb', '256'],
  },
  { name: 'docker-provider', what: 'Docker provider vs raw docker run; capture by size', args: ['--iterations', '8', '--skip-1g'] },
  {
    name: 'exec-stream',
    what: 'first byte of streamed exec vs collected; through the API vs provider',
    args: ['--provider', 'local', '--iterations', '10'],
  },
  {
    name: 'terminal',
    what: 'keystroke round trip and flood through the WebSocket vs a direct PTY',
    args: ['--keystrokes', '200', '--flood-mib', '256'],
  },
  { name: 'ports', what: 'a sandbox port through the proxy vs a direct loopback connection', args: ['--requests', '200', '--mib', '64'] },
  { name: 'scale', what: '200 local sandboxes alive: creation rate, API p99 under load vs one alive, memory each', args: [] },
];

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const only = option('--only')?.split(',');
const out = path.resolve(ROOT, option('--out') ?? 'bench/REPORT.md');

function run(bench: Benchmark): Promise<{ code: number | null; output: string; seconds: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', bench.name, 'run.ts'), ...bench.args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      process.stdout.write(chunk);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('close', (code) => resolve({ code, output, seconds: (performance.now() - started) / 1000 }));
  });
}

function machine(): string[] {
  const cpus = os.cpus();
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Commit: ${commit}`,
    `- Machine: ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}`,
    `- Node ${process.version}; load average at start ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' / ')}`,
  ];
}

const selected = BENCHMARKS.filter((b) => !only || only.includes(b.name));
const lines = [
  '# Benchmark report',
  '',
  'Written by `npm run bench` (bench/report.ts). Every ratio is against a baseline measured in the same run.',
  '',
  ...machine(),
  '',
];
for (const bench of selected) {
  console.error(`\n== ${bench.name} ${bench.args.join(' ')}`);
  const result = await run(bench);
  lines.push(
    `## ${bench.name}`,
    '',
    `${bench.what}. \`npx tsx bench/${bench.name}/run.ts ${bench.args.join(' ')}\` — ${result.seconds.toFixed(0)} s${result.code === 0 ? '' : `, **exit ${result.code}**`}`,
    '',
    '```text',
    result.output.trim(),
    '```',
    '',
  );
}
await writeFile(out, `${lines.join('\n')}\n`);
console.error(`\nwrote ${path.relative(process.cwd(), out)} (${selected.length} benchmark runs)`);
