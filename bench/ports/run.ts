/**
 * Sandbox port proxy benchmark (issue 18). From one run it prints:
 *  - request latency (sequential GETs, p50 / p95) through a private port URL into a local sandbox,
 *    against the same server script on the host's loopback reached directly, and the ratio;
 *  - download throughput of one large body through the URL against the direct connection;
 *  - the forwarder's per-connection cost (its start: nsenter + the relay connecting).
 * Needs root (the local provider). Loopback only; bounded loops; everything is removed at the end.
 *
 *   npx tsx bench/ports/run.ts [--requests 200] [--mib 256]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLocalProvider } from '@sandcast/provider-local';
import { loadConfig, startServer } from '@sandcast/server';
import { percentile } from '../support/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const REQUESTS = Math.min(5000, Math.max(20, option('--requests', 200)));
const MIB = Math.min(4096, Math.max(16, option('--mib', 256)));
const WARMUP = 10;
const SCRIPT_PATH = fileURLToPath(new URL('../../tests/integration/support/port-echo-server.mjs', import.meta.url));
const SANDBOX_PORT = 8080;

const lookup = ((_h: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) =>
  o.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)) as never;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string, headers: Record<string, string>, sink = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, lookup, agent }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (!sink && bytes > 1e6) reject(new Error('unexpected large answer'));
      });
      response.on('end', () => (response.statusCode === 200 ? resolve(bytes) : reject(new Error(`HTTP ${response.statusCode}`))));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

async function latencies(url: string, headers: Record<string, string>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await get(url, headers);
  const out: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const started = process.hrtime.bigint();
    await get(url, headers);
    out.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return out;
}

async function throughput(url: string, headers: Record<string, string>): Promise<number> {
  const started = process.hrtime.bigint();
  const bytes = await get(url, headers, true);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return bytes / 1024 / 1024 / seconds;
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-ports-'));
const direct = spawn(process.execPath, [SCRIPT_PATH, '18080', path.join(dataDir, 'direct-ready')], { stdio: 'ignore' });
const server = await startServer(
  loadConfig({ SANDCAST_PORT: '0', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'warn', SANDCAST_SSH_PORT: 'off' }),
  { providers: [createLocalProvider({ dataDir })] },
);
try {
  const { SandcastClient } = await import('@sandcast/client');
  const client = new SandcastClient({ baseUrl: server.url });
  await client.settings.update({ experimental: { enableEnvironments: true } });
  const env = await client.environments.create({ name: 'bench-ports', provider: 'local', config: {} });
  const sandbox = await client.sandboxes.create({ environmentId: env.id });
  const script = await readFile(SCRIPT_PATH, 'utf8');
  await client.sandboxes.exec(sandbox.id, { command: ['sh', '-c', 'printf %s "$1" > /tmp/s.mjs', 'sh', script] });
  await client.sandboxes.exec(sandbox.id, { command: ['sh', '-c', `nohup node /tmp/s.mjs ${SANDBOX_PORT} /tmp/ready >/dev/null 2>&1 &`] });
  await client.sandboxes.exec(sandbox.id, {
    command: ['sh', '-c', 'for i in $(seq 200); do [ -f /tmp/ready ] && exit 0; sleep 0.05; done; exit 1'],
  });
  const opened = await client.sandboxes.ports.open(sandbox.id, { port: SANDBOX_PORT });
  const { url } = await client.sandboxes.ports.url(sandbox.id, SANDBOX_PORT);
  const exchanged = await new Promise<http.IncomingMessage>((resolve) => http.get(url, { lookup }, resolve));
  exchanged.resume();
  const cookie = String(exchanged.headers['set-cookie']).split(';')[0]!;
  const viaUrl = opened.baseUrl;
  const directUrl = 'http://127.0.0.1:18080/';

  const d = await latencies(`${directUrl}hello`, {});
  const p = await latencies(`${viaUrl}hello`, { cookie });
  const dT = await throughput(`${directUrl}bytes/${MIB * 1024 * 1024}`, {});
  const pT = await throughput(`${viaUrl}bytes/${MIB * 1024 * 1024}`, { cookie });
  const f = (n: number) => n.toFixed(2);
  console.log(`sandbox ports proxy (local provider), ${REQUESTS} sequential requests, ${MIB} MiB download`);
  console.log(`request latency  direct loopback  p50 ${f(percentile(d, 50))} ms  p95 ${f(percentile(d, 95))} ms`);
  console.log(`request latency  through the URL  p50 ${f(percentile(p, 50))} ms  p95 ${f(percentile(p, 95))} ms`);
  console.log(`  ratio p50 ${f(percentile(p, 50) / percentile(d, 50))}x; the difference is the per-connection forwarder start`);
  console.log(`  per-connection overhead p50 ${f(percentile(p, 50) - percentile(d, 50))} ms`);
  console.log(`throughput       direct ${f(dT)} MiB/s  through the URL ${f(pT)} MiB/s  ratio ${f(pT / dT)}`);
  await client.sandboxes.delete(sandbox.id);
} finally {
  direct.kill();
  agent.destroy();
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
}
