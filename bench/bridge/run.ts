/**
 * The host bridge's round trip: a request from a client to the in-sandbox gateway, out to the
 * host's forwarder and back, over the duplex channel (`duplex_v1`: frames on the gateway's
 * stdio) and over the file bridge (`queue_v1`: spool files, a blocking `wait` and `commit`
 * through exec), against a direct loopback HTTP server in the same run. The gateway runs on this
 * host as its own process, so the figures are the bridge's own cost without a provider's exec
 * path; the forwarder answers at once. p50/p99 of sequential round trips, then throughput with
 * 16 clients.
 *
 *   npx tsx bench/bridge/run.ts [--requests 2000] [--file-requests 200]
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import {
  awaitReady,
  createDuplexBroker,
  createNonce,
  duplexGatewayCommand,
  type Forwarder,
  GATEWAY_SOURCE,
  queueGatewayCommand,
  startFileBridge,
} from '@sandcast/bridge';
import { staticBinary } from '@sandcast/provider-sdk';
import { percentile } from '../support/stats.ts';

const run = promisify(execFile);
const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1] ?? fallback) : fallback;
};
const REQUESTS = Math.max(100, option('--requests', 2000));
const FILE_REQUESTS = Math.max(20, option('--file-requests', 200));
const CONCURRENCY = 16;

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createNetServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

/** One GET with `Connection: close` (what the gateway speaks), resolved with its status. */
const get = (port: number) =>
  new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: '/api/sessions/s1', agent: false, headers: { connection: 'close' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });

const body = Buffer.from('{"id":"s1","status":"active"}');
const forward: Forwarder = async () => ({ status: 200, headers: { 'content-type': 'application/json' }, body });

async function measure(label: string, port: number, sequential: number) {
  for (let i = 0; i < Math.min(50, sequential); i++) await get(port);
  const times: number[] = [];
  for (let i = 0; i < sequential; i++) {
    const start = performance.now();
    const status = await get(port);
    times.push(performance.now() - start);
    if (status !== 200) throw new Error(`${label}: status ${status}`);
  }
  const total = sequential;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < total) await get(port);
    }),
  );
  const perSecond = total / ((performance.now() - started) / 1000);
  return { label, p50: percentile(times, 50), p99: percentile(times, 99), perSecond };
}

async function main() {
  const gateway = await staticBinary(GATEWAY_SOURCE, 'sandcast-gateway');
  const results = [];

  // Direct: a loopback HTTP server answering the same body.
  const direct = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  await new Promise<void>((resolve) => direct.listen(0, '127.0.0.1', resolve));
  const directPort = (direct.address() as { port: number }).port;
  results.push(await measure('direct loopback HTTP (baseline)', directPort, REQUESTS));
  direct.close();

  // Duplex: the gateway's stdio as the channel, the broker on it.
  const port = await freePort();
  const nonce = createNonce();
  const [, ...duplexArgs] = duplexGatewayCommand({ port, nonce, binary: gateway });
  const child = spawn(gateway, duplexArgs, { stdio: ['pipe', 'pipe', 'inherit'] });
  const stdin = new PassThrough();
  stdin.pipe(child.stdin);
  const ready = await awaitReady({ input: child.stdout, nonce });
  if (!ready.ready) throw new Error(`duplex handshake failed: ${ready.reason}`);
  const broker = createDuplexBroker({ frames: ready.frames, sink: { write: (l) => stdin.write(l), end: () => stdin.end() }, forward });
  results.push(await measure('duplex_v1 (gateway stdio frames)', port, REQUESTS));
  broker.close('teardown');
  child.kill();

  // File bridge: the spool through exec of the gateway's wait/commit, as a provider's exec would run them.
  const spool = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-spool-'));
  const filePort = await freePort();
  const [, ...queueArgs] = queueGatewayCommand({ port: filePort, spool, binary: gateway });
  await run(gateway, queueArgs);
  const file = startFileBridge({
    exec: async (command, opts) => {
      const [, ...rest] = command;
      try {
        const { stdout, stderr } = await run(gateway, rest, { timeout: opts.timeoutMs });
        return { exitCode: 0, stdout, stderr };
      } catch (error) {
        const failed = error as { code?: number; stdout?: string; stderr?: string };
        return { exitCode: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
      }
    },
    readFile: (p) => readFile(p),
    writeFile: (p, data) => writeFile(p, data),
    forward,
    gatewayCommand: [gateway],
    spoolDir: spool,
  });
  results.push(await measure('queue_v1 (spool files, blocking wait + commit via exec)', filePort, FILE_REQUESTS));
  await file.stop();
  await run('/bin/sh', ['-c', `kill "$(cat ${spool}/gateway.pid)"`]).catch(() => undefined);
  await rm(spool, { recursive: true, force: true });

  const baseline = results[0]!;
  console.log(`bridge round trips (sequential: ${REQUESTS} duplex/direct, ${FILE_REQUESTS} file; throughput: ${CONCURRENCY} clients)`);
  for (const r of results) {
    console.log(
      `${r.label.padEnd(58)} p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms   ` +
        `${r.perSecond.toFixed(0).padStart(6)} req/s   p50 ×${(r.p50 / baseline.p50).toFixed(2)}`,
    );
  }
}

await main();
