/**
 * Checkpoint cost against the size of the change (ARCHITECTURE §12; issue 13): a workspace of
 * 1 GiB in 10,000 files on the host, a first checkpoint, then checkpoints after changing one
 * file, 1 % and 100 % of the files — time and bytes stored for each, against `tar czf` of the
 * whole workspace measured in the same run (what a checkpoint costs when it copies everything).
 * Half the files are word-like text (gzip shrinks it), half random bytes (it cannot).
 *
 *   npx tsx bench/checkpoints/run.ts [--iterations 5] [--tar-runs 3]
 *   SANDCAST_BENCH_CKPT_MB=64 SANDCAST_BENCH_CKPT_FILES=2000 npx tsx bench/checkpoints/run.ts   # a small run
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type CaptureResult, type CheckpointManifest, createCheckpointEngine, createFsBlobStore } from '@sandcast/server';
import { percentile, row } from '../support/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const TOTAL_MB = Math.max(1, Number(process.env.SANDCAST_BENCH_CKPT_MB ?? 1024));
const FILES = Math.max(100, Number(process.env.SANDCAST_BENCH_CKPT_FILES ?? 10_000));
const ITERATIONS = Math.min(50, Math.max(1, Number(option('--iterations', '5'))));
const TAR_RUNS = Math.min(10, Math.max(1, Number(option('--tar-runs', '3'))));
const DIRS = Math.ceil(FILES / 100);
const MB = 1024 * 1024;

const WORDS = 'sandbox checkpoint manifest chunk digest workspace restore provider overlay layer snapshot agent session'.split(' ');
/** 4 MiB of word-like text; files take slices of it at random offsets. */
const TEXT = Buffer.from(Array.from({ length: 600_000 }, () => WORDS[randomInt(WORDS.length)]).join(' ')).subarray(0, 4 * MB);

/** Sizes around the mean (¼× to 1¾×) that add up to the total exactly. */
function sizes(): number[] {
  const mean = Math.floor((TOTAL_MB * MB) / FILES);
  const factors = [0.25, 0.5, 1, 1.5, 1.75];
  const out = Array.from({ length: FILES }, (_, i) => Math.floor(mean * factors[i % factors.length]!));
  out[0]! += TOTAL_MB * MB - out.reduce((a, b) => a + b, 0);
  return out;
}

const fileName = (root: string, i: number) => path.join(root, `pkg${i % DIRS}`, `file${i}.${i % 2 ? 'bin' : 'txt'}`);

/** New content for file `i`: a unique first line, then text or random bytes. */
function content(i: number, size: number): Buffer {
  const head = Buffer.from(`#${i} ${randomBytes(8).toString('hex')}\n`);
  if (i % 2) return Buffer.concat([head, randomBytes(Math.max(0, size - head.length))]).subarray(0, size);
  const parts = [head];
  for (let have = head.length; have < size; ) {
    const start = randomInt(TEXT.length - 1);
    const piece = TEXT.subarray(start, Math.min(TEXT.length, start + size - have));
    parts.push(piece);
    have += piece.length;
  }
  return Buffer.concat(parts).subarray(0, size);
}

const mib = (bytes: number) => `${(bytes / MB).toFixed(bytes < MB ? 3 : 1)} MiB`;

async function main() {
  const scratch = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-ckpt-'));
  const workspace = path.join(scratch, 'workspace');
  try {
    const fileSizes = sizes();
    for (let d = 0; d < DIRS; d++) await mkdir(path.join(workspace, `pkg${d}`), { recursive: true });
    const rewrite = async (indexes: number[]) => {
      for (let at = 0; at < indexes.length; at += 64) {
        await Promise.all(indexes.slice(at, at + 64).map((i) => writeFile(fileName(workspace, i), content(i, fileSizes[i]!))));
      }
    };
    const all = Array.from({ length: FILES }, (_, i) => i);
    await rewrite(all);
    console.error(`built ${FILES} files, ${TOTAL_MB} MiB in ${DIRS} directories`);

    // Baseline: the whole workspace as one tar.gz, every time.
    const tarTimes: number[] = [];
    let tarBytes = 0;
    for (let run = 0; run < TAR_RUNS; run++) {
      const out = path.join(scratch, `baseline-${run}.tgz`);
      const t0 = performance.now();
      await promisify(execFile)('tar', ['czf', out, '-C', workspace, '.']);
      tarTimes.push(performance.now() - t0);
      tarBytes = (await stat(out)).size;
      await rm(out);
    }

    const engine = createCheckpointEngine({ blobs: createFsBlobStore(path.join(scratch, 'blobs')) });
    let previous: CheckpointManifest | null = null;
    const checkpoint = async (): Promise<{ ms: number; result: CaptureResult }> => {
      const t0 = performance.now();
      const result = await engine.capture({ kind: 'host-dir', dir: workspace }, previous);
      const ms = performance.now() - t0;
      previous = result.manifest;
      return { ms, result };
    };
    const pick = (count: number) => {
      const chosen = new Set<number>();
      while (chosen.size < count) chosen.add(randomInt(FILES));
      return [...chosen];
    };

    const cases: { label: string; changed: number; runs: number }[] = [
      { label: 'no change', changed: 0, runs: ITERATIONS },
      { label: '1 file changed', changed: 1, runs: ITERATIONS },
      { label: '1 % of the files changed', changed: Math.max(1, Math.round(FILES / 100)), runs: Math.min(ITERATIONS, 3) },
      { label: '100 % of the files changed', changed: FILES, runs: 1 },
    ];
    const first = await checkpoint();
    const figures: { label: string; times: number[]; bytes: number[]; changedBytes: number[] }[] = [
      { label: 'first checkpoint', times: [first.ms], bytes: [first.result.storedBytes], changedBytes: [first.result.totalBytes] },
    ];
    for (const c of cases) {
      const figure = { label: c.label, times: [] as number[], bytes: [] as number[], changedBytes: [] as number[] };
      for (let run = 0; run < c.runs; run++) {
        const changed = c.changed === FILES ? all : pick(c.changed);
        await rewrite(changed);
        const { ms, result } = await checkpoint();
        if (result.changedPaths !== changed.length)
          throw new Error(`${c.label}: ${result.changedPaths} paths changed, expected ${changed.length}`);
        figure.times.push(ms);
        figure.bytes.push(result.storedBytes);
        figure.changedBytes.push(changed.reduce((sum, i) => sum + fileSizes[i]!, 0));
      }
      figures.push(figure);
    }

    console.log(`\ncheckpoints of a ${TOTAL_MB} MiB workspace of ${FILES} files; one run, the baseline measured in it\n`);
    console.log(row(`tar czf of the whole workspace (baseline, ${TAR_RUNS} runs)`, tarTimes));
    for (const f of figures) console.log(row(`checkpoint: ${f.label} (${f.times.length} runs)`, f.times, tarTimes));
    console.log(`\nbytes stored per checkpoint (tar czf: ${mib(tarBytes)} every time)\n`);
    const machine: Record<string, unknown> = { totalMiB: TOTAL_MB, files: FILES, tarMs: percentile(tarTimes, 50), tarBytes };
    for (const f of figures) {
      const bytes = percentile(f.bytes, 50);
      const ms = percentile(f.times, 50);
      console.log(
        `${f.label.padEnd(32)} changed ${mib(percentile(f.changedBytes, 50)).padStart(12)}   stored ${mib(bytes).padStart(12)}   ` +
          `tar/checkpoint: time ×${(percentile(tarTimes, 50) / ms).toFixed(1)}, bytes ${bytes === 0 ? '(nothing stored)' : `×${(tarBytes / bytes).toFixed(1)}`}`,
      );
      machine[f.label] = { ms: Math.round(ms * 10) / 10, p95Ms: Math.round(percentile(f.times, 95) * 10) / 10, storedBytes: bytes };
    }
    const oneFile = figures.find((f) => f.label === '1 file changed')!;
    const timeRatio = percentile(tarTimes, 50) / percentile(oneFile.times, 50);
    const byteRatio = tarBytes / percentile(oneFile.bytes, 50);
    console.log(
      `\ngoal (issue 13): a 1-file checkpoint at least 50× cheaper than tar czf in time and bytes — ` +
        `time ×${timeRatio.toFixed(0)}, bytes ×${byteRatio.toFixed(0)}: ${timeRatio >= 50 && byteRatio >= 50 ? 'met' : 'NOT met'}` +
        (TOTAL_MB < 1024 ? ' (the goal is for 1 GiB; fixed costs weigh more in this smaller run)' : ''),
    );
    console.log(`machine: ${JSON.stringify({ bench: 'checkpoints', ...machine })}`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
