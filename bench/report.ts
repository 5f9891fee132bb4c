/**
 * `npm run bench`: runs every benchmark one after another with report-sized arguments and writes
 * bench/REPORT.md — the machine, the commit, the load, and each benchmark's printout (each figure
 * there carries its own baseline from the same run and the ratio to it).
 *
 *   npx tsx bench/report.ts [--only name,name] [--update] [--out bench/REPORT.md] [--timeout-minutes 30]
 *
 * `--update` re-runs only the selected benchmarks and replaces their sections in the existing
 * report (the header then names what was re-run, when and at which commit).
 *
 * A benchmark that fails (or outlives the timeout) is reported with its exit code and output; the
 * others still run. A summary table up top lists each figure that has a ratio, with its baseline.
 * To add a benchmark: create bench/<name>/run.ts and add one `bench(...)` line to BENCHMARKS.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
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

/** One registry line: the bench/<name>/run.ts, what it compares, and the report's arguments (space-separated). */
const bench = (name: string, what: string, args = ''): Benchmark => ({ name, what, args: args.split(' ').filter(Boolean) });

/**
 * Every bench/<name>/run.ts, one line each, with the arguments the report uses (smaller than
 * their defaults where a run is long). A directory with a run.ts that has no line here still runs,
 * with its defaults, and the report says so.
 */
const BENCHMARKS: Benchmark[] = [
  bench('api-overhead', 'API create → first exec and exec `true` vs the raw provider calls (local)', '--iterations 20 --execs 40'),
  bench(
    'api-overhead',
    'API create → first exec and exec `true` with the provider left out: the control plane alone (null provider)',
    '--provider null --iterations 30 --execs 100',
  ),
  bench('custom-images', 'boot from a captured image vs base + setup; API vs raw provider (Docker)', '--iterations 5'),
  bench('sessions', 'session start → first exec vs raw provider create → exec (local)', '--provider local --iterations 20'),
  bench('sessions', 'session start → first exec vs raw provider create → exec (Docker)', '--provider docker --iterations 10'),
  bench('local-provider', 'local provider create → exec vs bwrap floor and docker run; capture', '--iterations 15 --max-mb 256'),
  bench('docker-provider', 'Docker provider vs raw docker run; capture by size', '--iterations 8 --skip-1g'),
  bench(
    'exec-agent',
    'exec `true` through the in-sandbox exec agent vs the old sh → nsenter → bwrap path; provider and API (local)',
    '--execs 60',
  ),
  bench('exec-stream', 'first byte of streamed exec vs collected; through the API vs provider', '--provider local --iterations 10'),
  bench('terminal', 'keystroke round trip and flood through the WebSocket vs a direct PTY', '--keystrokes 200 --flood-mib 256'),
  bench('ports', 'a sandbox port through the proxy vs a direct loopback connection', '--requests 200 --mib 64'),
  bench(
    'checkpoints',
    'checkpoint after 1 file / 1 % / 100 % changed in a 1 GiB workspace of 10,000 files vs tar czf of it',
    '--iterations 5 --tar-runs 3',
  ),
  bench(
    'bridge',
    'host bridge round trip: duplex_v1 vs queue_v1 vs direct loopback HTTP (gateway on this host)',
    '--requests 2000 --file-requests 200',
  ),
  bench(
    'egress',
    'requests and a download from a sandbox through the egress proxy vs a direct connection to the namespace',
    '--requests 200 --mib 64',
  ),
  bench('pools', 'warm-pool claim → first exec vs cold create → first exec and vs raw provider exec `true` (local)', '--iterations 20'),
  bench(
    'pools',
    'warm-pool claim → first exec with the provider left out: the control plane alone (null provider)',
    '--provider null --iterations 30',
  ),
  bench('recovery', 'compute killed → next session exec recovered vs exec on healthy compute (local)', '--provider local --iterations 10'),
  bench(
    'recovery',
    'compute killed → next session exec recovered vs exec on healthy compute (Docker)',
    '--provider docker --iterations 10',
  ),
  bench(
    'fork',
    'fork of a 1 GiB workspace into 4: disk clones vs the copy path; create: clone vs mkfs (local)',
    '--iterations 3 --creates 10',
  ),
  bench('scale', '200 local sandboxes alive: creation rate, API p99 under load vs one alive, memory each'),
];

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const only = option('--only')?.split(',');
const out = path.resolve(ROOT, option('--out') ?? 'bench/REPORT.md');
/** A benchmark still running after this is stopped and reported as such. */
const TIMEOUT_MS = Number(option('--timeout-minutes') ?? '30') * 60_000;

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  output: string;
  seconds: number;
}

function run(entry: Benchmark): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', entry.name, 'run.ts'), ...entry.args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
    }, TIMEOUT_MS);
    const keep = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      process.stdout.write(chunk);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, output, seconds: (performance.now() - started) / 1000 });
    });
  });
}

function outcomeText(result: Outcome): string {
  if (result.timedOut) return `, **stopped after ${TIMEOUT_MS / 60_000} min**`;
  if (result.code === 0) return '';
  return result.code === null ? `, **killed by ${result.signal}**` : `, **exit ${result.code}**`;
}

/** The figures rows of bench/support/stats.ts print: `label  p50 X ms  p95 Y ms  ×R`. */
const ROW = /^(.*?)\s+p50\s+([\d.]+) ms\s+p95\s+([\d.]+) ms(?:\s+×([\d.]+))?\s*$/;

/** Each figure with a ratio, beside the baseline row it is measured against (the last one labelled so). */
function summaryRows(name: string, output: string): string[] {
  const rows: string[] = [];
  let baseline: { label: string; p50: string } | null = null;
  for (const line of output.split('\n')) {
    const match = ROW.exec(line);
    if (!match) continue;
    const [, label = '', p50 = '', , ratio] = match;
    if (/baseline/i.test(label)) baseline = { label: label.replace(/\(baseline\)/i, '').trim(), p50 };
    else if (ratio && baseline) rows.push(`| ${name} | ${label.trim()} | ${p50} ms | ${baseline.label} | ${baseline.p50} ms | ×${ratio} |`);
  }
  return rows;
}

function commitOf(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${commit} (with uncommitted changes)` : commit;
  } catch {
    return 'unknown';
  }
}

const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');

function machine(): string[] {
  const cpus = os.cpus();
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Commit: ${commitOf()}`,
    `- Machine: ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}`,
    `- Node ${process.version}; load average at start ${loadAverage()}`,
  ];
}

/** Registered runs, then any bench/<name>/run.ts the registry lacks, with its defaults. */
async function planned(): Promise<Benchmark[]> {
  const entries = await readdir(path.join(ROOT, 'bench'), { withFileTypes: true });
  const found = entries.filter((e) => e.isDirectory() && existsSync(path.join(ROOT, 'bench', e.name, 'run.ts'))).map((e) => e.name);
  const unregistered = found
    .filter((name) => !BENCHMARKS.some((b) => b.name === name))
    .map((name) => bench(name, 'not registered in bench/report.ts: run with its defaults'));
  return [...BENCHMARKS.filter((b) => found.includes(b.name)), ...unregistered].filter((b) => !only || only.includes(b.name));
}

const selected = await planned();
/** `--update`: the report keeps every other section and its header; the selected runs replace theirs. */
const update = args.includes('--update');

/** One section of a report: its runner line's key (`name args`), its text, and the benchmark's printout. */
interface Section {
  key: string;
  name: string;
  lines: string[];
  output: string;
}

const keyOf = (entry: Benchmark) => `${entry.name} ${entry.args.join(' ')}`.trim();

/** The sections of a report written by this script, in order (the summary is recomputed, never read). */
function parseSections(report: string): { header: string[]; sections: Section[] } {
  const [head = '', ...parts] = report.split(/^## /m);
  const sections: Section[] = [];
  for (const part of parts) {
    const name = part.slice(0, part.indexOf('\n')).trim();
    if (name === 'Summary') continue;
    const runner = /`npx tsx bench\/([^/]+)\/run\.ts ?([^`]*)`/.exec(part);
    const output = /```text\n([\s\S]*?)\n```/.exec(part)?.[1] ?? '';
    if (!runner) continue;
    sections.push({ key: `${runner[1]} ${runner[2]}`.trim(), name, lines: `## ${part}`.trimEnd().split('\n'), output });
  }
  return { header: head.trimEnd().split('\n'), sections };
}

const previous = update && existsSync(out) ? parseSections(await readFile(out, 'utf8')) : null;
const header = previous
  ? [
      ...previous.header,
      ...(selected.length > 0
        ? [`- Re-run with \`--update\` on ${new Date().toISOString()} at ${commitOf()}: ${selected.map(keyOf).join('; ')}`]
        : []),
      '',
    ]
  : [
      '# Benchmark report',
      '',
      'Written by `npm run bench` (bench/report.ts). Every ratio is against a baseline measured in the same run.',
      '',
      ...machine(),
      '',
    ];
const sections: Section[] = previous ? [...previous.sections] : [];
for (const entry of selected) {
  console.error(`\n== ${keyOf(entry)}`);
  const load = loadAverage();
  const result = await run(entry);
  const section: Section = {
    key: keyOf(entry),
    name: entry.name,
    output: result.output.trim(),
    lines: [
      `## ${entry.name}`,
      '',
      `${entry.what}. \`npx tsx bench/${entry.name}/run.ts ${entry.args.join(' ')}\` — ${result.seconds.toFixed(0)} s, load average ${load} before${outcomeText(result)}`,
      '',
      '```text',
      result.output.trim(),
      '```',
    ],
  };
  const at = sections.findIndex((s) => s.key === section.key);
  if (at >= 0) sections[at] = section;
  else sections.push(section);
}
const summary = ['| Benchmark | Figure | p50 | Baseline (same run) | Baseline p50 | Ratio |', '| --- | --- | --- | --- | --- | --- |'];
for (const section of sections) summary.push(...summaryRows(section.name, section.output));
const body = sections.flatMap((section) => [...section.lines, '']);
await writeFile(out, `${[...header, '## Summary', '', ...summary, '', ...body].join('\n')}\n`);
console.error(
  `\nwrote ${path.relative(process.cwd(), out)} (${selected.length} benchmark runs${previous ? `, ${sections.length - selected.length} kept` : ''})`,
);
