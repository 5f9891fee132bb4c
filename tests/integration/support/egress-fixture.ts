import { createServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { testDatabases } from '@sandcast/db/testing';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { createMovableClock } from '@sandcast/server';
import { createTestNetwork, type TestNetwork } from '@sandcast/server/testing';
import { afterAll, beforeAll } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './harness.ts';
import { REAL_PROVIDER_DATABASE } from './lifecycle.ts';

/** The names the egress tests resolve, and what to: the test network, loopback, private, metadata. */
function egressTestNames(net: TestNetwork): Record<string, string[]> {
  return {
    'allowed.test': [net.upstreamAddress],
    'sni.test': [net.upstreamAddress],
    'denied.test': [net.upstreamAddress],
    'rebind.test': ['127.0.0.1'],
    'meta.test': ['169.254.169.254'],
    'private.test': ['10.99.0.1'],
  };
}

/** The hosts an allowlist environment names (denied.test is not among them). */
export const ALLOWLIST = ['allowed.test', 'sni.test', 'rebind.test', 'meta.test', 'private.test'];

/**
 * A server on a real provider with the egress tests' network: its proxy resolves the test names,
 * and the instance excepts exactly the upstream's two ports from the private-address refusal (the
 * test network is private by nature; every other private address stays refused).
 */
export function useEgressServer(providers: (dataDir: string) => SandboxProvider[]) {
  const database = testDatabases().find((d) => d.kind === REAL_PROVIDER_DATABASE)!;
  let t: TestServer | undefined;
  let net: TestNetwork | undefined;
  const clock = createMovableClock();
  beforeAll(async () => {
    net = await createTestNetwork({ names: ['allowed.test', 'sni.test'] });
    const names = egressTestNames(net);
    t = await startTestServer({ database, providers, clock, egressResolver: async (host) => names[host] ?? [] });
    await enableEnvironments(t.client);
    await t.client.settings.update({
      egress: { allowPrivateHosts: [`${net.upstreamAddress}:${net.httpPort}`, `${net.upstreamAddress}:${net.httpsPort}`] },
    });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await net?.close();
  });
  return { server: () => t!, net: () => net!, advanceClock: (ms: number) => clock.advance(ms) };
}

/** The bytes a TLS client sends first (its ClientHello) for `servername`, captured on loopback. */
export async function clientHelloFor(servername: string): Promise<Buffer> {
  const server = createServer();
  const hello = new Promise<Buffer>((resolve) =>
    server.once('connection', (socket) =>
      socket.once('data', (chunk: Buffer) => {
        resolve(chunk);
        socket.destroy();
      }),
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const client = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false });
  client.on('error', () => undefined);
  const bytes = await hello;
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
  return bytes;
}

/** The `port` the server under test listens on (the Sandcast API a sandbox must never reach). */
export const apiPortOf = (t: TestServer) => Number(new URL(t.url).port);

/** The Postgres port of the test machine (scripts/services.sh), refused like any host loopback port. */
export const POSTGRES_PORT = 55432;
