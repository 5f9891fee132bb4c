import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { SandcastClient } from '@sandcast/client';
import type { DeploymentMode } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import type { TestDatabase } from '@sandcast/db/testing';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { type Clock, loadConfig, type RunningServer, type StartOptions, startServer } from '@sandcast/server';
import type { FastifyInstance } from 'fastify';

export interface TestServer {
  server: RunningServer;
  url: string;
  dataDir: string;
  /** A client with no key (the local operator in local_trusted mode). */
  client: SandcastClient;
  /** Every log line the server wrote. */
  logs: string[];
  clientWithKey(apiKey: string): SandcastClient;
  /** A raw request, for what the typed client would refuse to send. */
  fetch(pathname: string, init?: RequestInit): Promise<{ status: number; body: unknown; text: string }>;
  close(): Promise<void>;
}

export async function startTestServer(options: {
  database: TestDatabase;
  mode?: DeploymentMode;
  /** Providers to offer instead of the defaults; a function gets the server's data dir. */
  providers?: SandboxProvider[] | ((dataDir: string) => SandboxProvider[]);
  env?: Record<string, string>;
  beforeListen?: (app: FastifyInstance) => void;
  clock?: Clock;
  /** An open store on `database` to use instead of a fresh database (servers sharing one); the server closes it. */
  store?: Store;
  /** The host bridge's upstreams and tuning. */
  bridge?: StartOptions['bridge'];
  /** How the egress proxy resolves names (the egress tests map test names to their network). */
  egressResolver?: (host: string) => Promise<string[]>;
  /** How long after a claim the pool's refill starts (StartOptions.refillDelayMs). */
  refillDelayMs?: number;
}): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-it-'));
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  const config = loadConfig({
    SANDCAST_PORT: '0',
    SANDCAST_DATA_DIR: dataDir,
    // Request lines are written at debug: the tests that say a secret never reaches the log need them there.
    SANDCAST_LOG_LEVEL: 'debug',
    SANDCAST_ENABLE_FAKE_PROVIDER: '1',
    SANDCAST_DEPLOYMENT_MODE: options.mode ?? 'local_trusted',
    // The SSH gateway is opt-in in tests (env SANDCAST_SSH_PORT: '0'), so parallel servers never contend for 2222.
    SANDCAST_SSH_PORT: 'off',
    ...options.env,
  });
  const server = await startServer(config, {
    store: options.store ?? (await options.database.open()),
    providers: typeof options.providers === 'function' ? options.providers(dataDir) : options.providers,
    logStream,
    beforeListen: options.beforeListen,
    clock: options.clock,
    bridge: options.bridge,
    egressResolver: options.egressResolver,
    refillDelayMs: options.refillDelayMs,
  });
  const url = server.url;
  return {
    server,
    url,
    dataDir,
    logs,
    client: new SandcastClient({ baseUrl: url }),
    clientWithKey: (apiKey) => new SandcastClient({ baseUrl: url, apiKey }),
    fetch: async (pathname, init) => {
      const response = await fetch(url + pathname, init);
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: response.status, body, text };
    },
    close: async () => {
      // Sandboxes outlive a server by design; a test's must not outlive the test (mounts, containers).
      await server.reconciler.stop();
      for (const { provider } of server.providers.list()) {
        const instances = await provider.listInstances().catch(() => []);
        for (const instance of instances) await provider.destroy(instance.instanceId).catch(() => undefined);
      }
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Turns environments on, as an operator does first. */
export async function enableEnvironments(client: SandcastClient): Promise<void> {
  await client.settings.update({ experimental: { enableEnvironments: true } });
}

/**
 * A raw JSON call to the server that keeps every answer's text in `answers`, so a test can search
 * all it saw for a planted secret at the end. `server` is read at call time (set in beforeAll).
 */
export function recordingCall(server: () => TestServer, answers: string[]) {
  return async (method: string, path: string, body?: unknown) => {
    const answer = await server().fetch(path, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    answers.push(answer.text);
    // biome-ignore lint/suspicious/noExplicitAny: raw answers of many shapes, read field by field by the tests
    return answer as { status: number; body: Record<string, any>; text: string };
  };
}
