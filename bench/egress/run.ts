/**
 * Egress proxy benchmark. From one run it prints, for the same client program:
 *  - plain HTTP request latency (a new connection per request, p50 / p95) from inside a local
 *    sandbox through the egress proxy (relay on the sandbox's loopback → unix socket → proxy →
 *    upstream), against the client on the host connecting straight to the upstream;
 *  - a CONNECT tunnel with one request in it, against a bare TCP connection with the same request;
 *  - the throughput of one large download both ways; and the ratios.
 * The upstream runs in a network namespace the benchmark creates (a veth pair, a private /30) and
 * is removed at the end. Needs root (the local provider, ip netns).
 *
 *   npx tsx bench/egress/run.ts [--requests 200] [--mib 256]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SandcastClient } from '@sandcast/client';
import { createLocalProvider } from '@sandcast/provider-local';
import { loadConfig, startServer } from '@sandcast/server';
import { createTestNetwork } from '@sandcast/server/testing';
import { row } from '../support/stats.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const REQUESTS = Math.min(5000, Math.max(20, option('--requests', 200)));
const MIB = Math.min(4096, Math.max(16, option('--mib', 256)));
const CLIENT = fileURLToPath(new URL('./client.mjs', import.meta.url));
const run = promisify(execFile);

interface Figures {
  plain: number[];
  tunnel: number[];
  mibPerSecond: number;
}

const net = await createTestNetwork({ names: ['bench.test'] });
const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-bench-egress-'));
const server = await startServer(
  loadConfig({ SANDCAST_PORT: '0', SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'warn', SANDCAST_SSH_PORT: 'off' }),
  { providers: [createLocalProvider({ dataDir })], egressResolver: async (host) => (host === 'bench.test' ? [net.upstreamAddress] : []) },
);
try {
  const client = new SandcastClient({ baseUrl: server.url });
  await client.settings.update({
    experimental: { enableEnvironments: true },
    egress: { allowPrivateHosts: [`${net.upstreamAddress}:${net.httpPort}`] },
  });
  const env = await client.environments.create({
    name: 'bench-egress',
    provider: 'local',
    config: {},
    spec: { containment: { network: 'allowlist', hosts: ['bench.test'] } },
  });
  const sandbox = await client.sandboxes.create({ environmentId: env.id });
  const script = await readFile(CLIENT, 'utf8');
  await client.sandboxes.exec(sandbox.id, { command: ['sh', '-c', 'printf %s "$1" > /tmp/client.mjs', 'sh', script] });
  const counts = [String(REQUESTS), String(MIB)];
  const direct = JSON.parse(
    (await run(process.execPath, [CLIENT, 'direct', net.upstreamAddress, String(net.httpPort), ...counts])).stdout,
  ) as Figures;
  const proxied = await client.sandboxes.exec(sandbox.id, {
    command: ['node', '/tmp/client.mjs', 'proxy', 'bench.test', String(net.httpPort), ...counts],
    timeoutMs: 600_000,
  });
  if (proxied.exitCode !== 0) throw new Error(`the client in the sandbox failed: ${proxied.stderr}`);
  const through = JSON.parse(proxied.stdout) as Figures;
  const egress = (await client.sandboxes.get(sandbox.id)).egress;
  console.log(`egress proxy (local provider), ${REQUESTS} sequential requests each, ${MIB} MiB download; upstream in a network namespace`);
  console.log(row('plain GET, new connection: direct from the host', direct.plain));
  console.log(row('plain GET, new connection: sandbox → egress proxy', through.plain, direct.plain));
  console.log(row('TCP + one GET: direct from the host', direct.tunnel));
  console.log(row('CONNECT tunnel + one GET: sandbox → egress proxy', through.tunnel, direct.tunnel));
  const f = (n: number) => n.toFixed(1);
  console.log(
    `throughput       direct ${f(direct.mibPerSecond)} MiB/s  through the proxy ${f(through.mibPerSecond)} MiB/s  ratio ${(through.mibPerSecond / direct.mibPerSecond).toFixed(2)}`,
  );
  console.log(`bytes counted on the sandbox: sent ${egress?.sentBytes ?? 0}, received ${egress?.receivedBytes ?? 0}`);
  await client.sandboxes.delete(sandbox.id);
} finally {
  await server.close();
  await net.close();
  await rm(dataDir, { recursive: true, force: true });
}
