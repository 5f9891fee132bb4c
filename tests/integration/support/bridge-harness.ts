import { randomInt } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { SandcastClient } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { afterAll, beforeAll } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './harness.ts';
import { REAL_PROVIDER_DATABASE } from './lifecycle.ts';

/** The gateway inside every bridged sandbox, and its client mode (the test image has no curl). */
export const GATEWAY = '/run/sandcast/bin/sandcast-gateway';

/** The credential of the loopback upstream: it must reach the upstream and never the sandbox. */
export const UPSTREAM_SECRET = `upstream-secret-${randomInt(1e9)}`;

interface Hooks {
  /** The wait for READY is over at once, as if its budget had passed (the case of a gateway that never answers). */
  expireReadyWait?: true;
  command?: (command: string[]) => string[];
  gatewayNonce?: (nonce: string) => string;
  onReady?: (cut: () => void) => void;
}

/** A loopback HTTP service standing in for an LLM or Git API: it reports what reached it. */
async function startUpstream(): Promise<{ server: Server; url: string; seen: { path: string; authorization: string }[] }> {
  const seen: { path: string; authorization: string }[] = [];
  const server = createServer((request, response) => {
    seen.push({ path: request.url ?? '', authorization: request.headers.authorization ?? '' });
    const authorized = request.headers.authorization === `Bearer ${UPSTREAM_SECRET}`;
    response.writeHead(authorized ? 200 : 401, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ path: request.url, authorized }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { server, url: `http://127.0.0.1:${port}`, seen };
}

/**
 * A server on one real provider with the bridge tuned for tests: short ready and wait times, the
 * port and the gateway's start open to hooks, and a loopback upstream `echo` under `/v1/*`.
 */
export function useBridgeServer(provider: (dataDir: string) => SandboxProvider, config: Record<string, unknown>) {
  const database = testDatabases().find((d) => d.kind === REAL_PROVIDER_DATABASE)!;
  const state: { hooks: Hooks; port: number | null } = { hooks: {}, port: null };
  let t: TestServer | undefined;
  let upstream: Awaited<ReturnType<typeof startUpstream>> | undefined;
  let agentId = '';
  beforeAll(async () => {
    upstream = await startUpstream();
    const url = upstream.url;
    t = await startTestServer({
      database,
      providers: (dataDir) => [provider(dataDir)],
      bridge: {
        upstreams: async () => [{ name: 'echo', baseUrl: url, allowedPaths: ['/v1/*'], credential: UPSTREAM_SECRET }],
        options: {
          fileWaitMs: 2000,
          // A port a test chose is used once (the file bridge's retry then gets a random one).
          pickPort: () => {
            const chosen = state.port;
            state.port = null;
            return chosen ?? randomInt(20_000, 60_000);
          },
          duplex: {
            readyTimeoutMs: 3000,
            readyClock: {
              now: () => Date.now(),
              setTimeout: (callback, ms) => setTimeout(callback, state.hooks.expireReadyWait ? 0 : ms),
              clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
            },
            hooks: {
              command: (command) => state.hooks.command?.(command) ?? command,
              gatewayNonce: (nonce) => state.hooks.gatewayNonce?.(nonce) ?? nonce,
              onReady: (cut) => state.hooks.onReady?.(cut),
            },
          },
        },
      },
    });
    await enableEnvironments(t.client);
    await t.client.settings.update({ experimental: { enableSandboxDuplexBridge: true } });
    const id = provider('/nonexistent').id;
    const env = await t.client.environments.create({ name: `bridge-${id}`, provider: id, config });
    agentId = (
      await t.client.agents.create({
        name: `bridge-${id}`,
        sandboxPolicy: { mode: 'fixed', default: 'main', bindings: { main: { environmentRevisionId: env.currentRevision.id } } },
      })
    ).id;
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    upstream?.server.close();
  });

  const server = () => t!;
  /** Starts a session and waits for its sandbox's bridge to settle. */
  const startSession = async () => {
    const session = await server().client.sessions.start({ agentId });
    const sandboxId = session.primarySandboxId!;
    await server().server.services.bridges.env(sandboxId);
    return { session, sandboxId, status: server().server.services.bridges.status(sandboxId) };
  };
  /** Runs a shell script in the session's sandbox (its env names the bridge). */
  const inside = async (client: SandcastClient, sessionId: string, script: string) =>
    client.sessions.exec(sessionId, { command: ['sh', '-c', script], timeoutMs: 60_000 });
  return { server, state, startSession, inside, upstream: () => upstream!, agentId: () => agentId };
}

/** The status and body of the gateway client's `-i` output. */
export function parseAnswer(stdout: string): { status: number; body: string } {
  const split = stdout.indexOf('\r\n\r\n');
  return { status: Number(stdout.slice(9, 12)), body: split === -1 ? '' : stdout.slice(split + 4) };
}
