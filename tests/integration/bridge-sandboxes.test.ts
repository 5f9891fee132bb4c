import { readdirSync, readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createDockerProvider } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { describe, expect, it } from 'vitest';
import { GATEWAY, parseAnswer, UPSTREAM_SECRET, useBridgeServer } from './support/bridge-harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite } from './support/lifecycle.ts';

/*
 * The host bridge with the real gateway in real sandboxes: processes inside call
 * $SANDCAST_BRIDGE_URL, the server forwards to the session's own routes and to a loopback
 * upstream with its credential added on the host, over duplex_v1 when both gates are true and
 * over queue_v1 for every other case.
 */

/**
 * The flood: clients at once inside the sandbox, each sending `each` requests one after another.
 * The server's duplex broker, forwarder and memory are the same whatever carries the stream, so
 * the 10,000-request bound is measured once (local); Docker's stream gets the same 16 clients at
 * once with fewer requests each, which still proves concurrent requests over its attach stream and
 * that ending the session leaves no gateway behind.
 */
interface Flood {
  /** Sequential requests first, so the heap is measured after the broker and forwarder are warm. */
  warm: number;
  clients: number;
  each: number;
}

const PROVIDERS: Array<{
  id: string;
  skipReason: () => Promise<string | null>;
  create: (dataDir: string) => SandboxProvider;
  config: Record<string, unknown>;
  flood: Flood;
}> = [
  {
    id: 'local',
    skipReason: localSkipReason,
    create: (dataDir) => createLocalProvider({ dataDir }),
    config: {},
    flood: { warm: 500, clients: 16, each: 625 },
  },
  {
    id: 'docker',
    skipReason: dockerSkipReason,
    create: (dataDir) => createDockerProvider({ dataDir }),
    config: { image: TEST_IMAGE },
    flood: { warm: 64, clients: 16, each: 64 },
  },
];

/** A full collection, so heap figures are what is live (vitest does not run node with --expose-gc). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Gateway processes on this host whose command line names `port` (local and Docker sandboxes run here). */
function gatewaysOnPort(port: string): number {
  let count = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmdline[0]?.endsWith('sandcast-gateway') && cmdline.includes(port)) count++;
    } catch {
      // gone meanwhile
    }
  }
  return count;
}

for (const provider of PROVIDERS) {
  const runnable = requireForSuite(`bridge-${provider.id}`, await provider.skipReason());

  describe.skipIf(!runnable)(`the host bridge in ${provider.id} sandboxes [${REAL_PROVIDER_DATABASE}]`, () => {
    const { server, state, startSession, inside, upstream } = useBridgeServer(provider.create, provider.config);
    /** Asks until the answer is 200 (the file bridge taking over needs a moment to listen). */
    const callUntilOk = async (sessionId: string, args: string) => {
      for (;;) {
        const ran = await inside(server().client, sessionId, `${GATEWAY} request -i ${args}`);
        if (ran.exitCode === 0 && parseAnswer(ran.stdout).status === 200) return;
      }
    };
    const call = async (sessionId: string, args: string) => {
      const ran = await inside(server().client, sessionId, `${GATEWAY} request -i ${args}`);
      expect(ran.exitCode, ran.stderr).toBe(0);
      return parseAnswer(ran.stdout);
    };

    it('duplex with both gates true: allowed routes answer, others 403, the token is required, the upstream gets its credential', async () => {
      const { session, sandboxId, status } = await startSession();
      expect(status).toMatchObject({ transport: 'duplex_v1', fallbackReason: null });
      // The env of commands and the env file name the same bridge.
      const env = await inside(
        server().client,
        session.id,
        '. /run/sandcast/bridge.env && echo "$SANDCAST_BRIDGE_URL" && echo "$SANDCAST_BRIDGE_URL"',
      );
      const [fromFile, fromEnv] = env.stdout.trim().split('\n');
      expect(fromFile).toBe(status?.url);
      expect(fromEnv).toBe(status?.url);

      const own = await call(session.id, `/api/sessions/${session.id}`);
      expect(own.status).toBe(200);
      expect(JSON.parse(own.body)).toMatchObject({ id: session.id });

      const exec = await call(
        session.id,
        `-X POST -H 'content-type: application/json' -d '{"command":["sh","-c","echo bridged"]}' /api/sessions/${session.id}/exec`,
      );
      expect(exec.status).toBe(200);
      expect(JSON.parse(exec.body)).toMatchObject({ exitCode: 0, stdout: 'bridged\n' });

      const files = await call(session.id, `'/api/sessions/${session.id}/files?path=/run/sandcast/bridge.env'`);
      expect(files.status).toBe(200);

      for (const refused of ['/api/sessions/other-session', '/api/environments', '/api/settings', `/api/sessions/${session.id}/../other`]) {
        expect((await call(session.id, refused)).status, refused).toBe(403);
      }
      expect((await call(session.id, `-H 'authorization: Bearer not-the-token' /api/sessions/${session.id}`)).status).toBe(401);

      const up = await call(session.id, '/upstreams/echo/v1/models?x=1');
      expect(up.status).toBe(200);
      expect(JSON.parse(up.body)).toEqual({ path: '/v1/models?x=1', authorized: true });
      expect(upstream().seen.at(-1)).toEqual({ path: '/v1/models?x=1', authorization: `Bearer ${UPSTREAM_SECRET}` });
      expect((await call(session.id, '/upstreams/echo/admin')).status).toBe(403);
      expect((await call(session.id, '/upstreams/nope/v1/x')).status).toBe(403);

      // The upstream's credential is nowhere inside: not in the env, not in the bridge files.
      const leak = await inside(
        server().client,
        session.id,
        `env; cat /run/sandcast/bridge.env; grep -rl '${UPSTREAM_SECRET}' /run /tmp /workspace 2>/dev/null; true`,
      );
      expect(leak.stdout).not.toContain(UPSTREAM_SECRET);

      void sandboxId;
    });

    it('falls back to the file bridge for every reason, before any request, and serves there', async () => {
      const t = server();
      const contaminate = (c: string[]) => ['/bin/sh', '-c', 'head -c 9000 /dev/zero | tr "\\0" x; echo; exec "$@"', 'sh', ...c];
      const cases: Array<{ reason: string; hooks: typeof state.hooks }> = [
        { reason: 'ready_nonce_mismatch', hooks: { gatewayNonce: () => 'f'.repeat(32) } },
        { reason: 'contaminated', hooks: { command: contaminate } },
        { reason: 'ready_timeout', hooks: { command: () => ['sleep', '30'], expireReadyWait: true } },
      ];
      for (const { reason, hooks } of cases) {
        state.hooks = hooks;
        const { session, status } = await startSession();
        state.hooks = {};
        expect(status, reason).toMatchObject({ transport: 'queue_v1', fallbackReason: reason });
        const answer = await call(session.id, `/api/sessions/${session.id}`);
        expect(answer.status, reason).toBe(200);
        await t.client.sessions.end(session.id);
      }
      // A port something inside already holds: the gateway says bind_failed, the file bridge takes another port.
      const { session, sandboxId } = await startSession();
      const held = 20_000 + Math.floor(Math.random() * 30_000);
      const squat = await inside(t.client, session.id, `${GATEWAY} queue --port ${held} --spool /tmp/squatter --daemon`);
      expect(squat.exitCode, squat.stderr).toBe(0);
      state.port = held;
      const record = await t.server.store.repos.sandboxes.get(sandboxId);
      const restarted = await t.server.services.bridges.start({
        sandboxId,
        sessionId: session.id,
        principal: { role: 'admin', keyId: null },
        providerId: provider.id,
        instanceId: record!.providerInstanceId!,
      });
      state.port = null;
      expect(restarted).toMatchObject({ transport: 'queue_v1', fallbackReason: 'channel_open_failed' });
      expect(restarted!.url).not.toBe(`http://127.0.0.1:${held}`);
      expect((await call(session.id, `/api/sessions/${session.id}`)).status).toBe(200);
      await t.client.sessions.end(session.id);
    });

    it('the gate off means the file bridge; turning the setting off closes an open duplex channel and the sandbox goes on over the file bridge', async () => {
      const t = server();
      await t.client.settings.update({ experimental: { enableSandboxDuplexBridge: false } });
      const off = await startSession();
      expect(off.status).toMatchObject({ transport: 'queue_v1', fallbackReason: 'gate_off' });
      expect((await call(off.session.id, `/api/sessions/${off.session.id}`)).status).toBe(200);
      await t.client.sessions.end(off.session.id);

      await t.client.settings.update({ experimental: { enableSandboxDuplexBridge: true } });
      const on = await startSession();
      expect(on.status?.transport).toBe('duplex_v1');
      await t.client.settings.update({ experimental: { enableSandboxDuplexBridge: false } });
      // Requests go on over the file bridge, on the same URL.
      await callUntilOk(on.session.id, `/api/sessions/${on.session.id}`);
      expect(t.server.services.bridges.status(on.sandboxId)).toMatchObject({
        transport: 'queue_v1',
        fallbackReason: 'gate_off',
        url: on.status?.url,
      });
      await t.client.settings.update({ experimental: { enableSandboxDuplexBridge: true } });
      await t.client.sessions.end(on.session.id);
    });

    it('a stopped sandbox loses its bridge and gets it back when it starts again', async () => {
      const t = server();
      const { session, sandboxId, status } = await startSession();
      expect(status?.transport).toBe('duplex_v1');
      const stopped = await t.client.sessions.stopSandbox(session.id);
      expect(stopped.status).toBe('stopped');
      expect(t.server.services.bridges.status(sandboxId)).toBeNull();
      await t.client.sessions.startSandbox(session.id);
      // The new gateway and token reach the commands the server runs there.
      await callUntilOk(session.id, `/api/sessions/${session.id}`);
      expect(t.server.services.bridges.status(sandboxId)).toMatchObject({ transport: 'duplex_v1' });
      await t.client.sessions.end(session.id);
    });

    it("after a restart (the process's bridges gone) every active session's running sandbox gets its bridge again", async () => {
      const t = server();
      const { session, sandboxId } = await startSession();
      // What a new process sees: no bridge, no token in memory, and the file gateway the old process
      // started still running in the sandbox (its token is no longer known to anyone).
      await t.server.services.bridges.stop(sandboxId);
      expect(t.server.services.bridges.status(sandboxId)).toBeNull();
      const leftover = String(20_000 + Math.floor(Math.random() * 30_000));
      const left = await inside(t.client, session.id, `${GATEWAY} queue --port ${leftover} --daemon`);
      expect(left.exitCode, left.stderr).toBe(0);
      expect(gatewaysOnPort(leftover)).toBe(1);
      expect(await t.server.services.sessions.resumeBridges()).toBeGreaterThanOrEqual(1);
      await expect.poll(() => gatewaysOnPort(leftover)).toBe(0);
      await callUntilOk(session.id, `/api/sessions/${session.id}`);
      expect(t.server.services.bridges.status(sandboxId)).toMatchObject({ transport: 'duplex_v1' });
      await t.client.sessions.end(session.id);
    });

    it('a stream cut mid-request: the unsafe request answers 504 indeterminate inside and its side effect happens once', async () => {
      const t = server();
      let cut: () => void = () => undefined;
      state.hooks = { onReady: (c) => (cut = c) };
      const { session } = await startSession();
      state.hooks = {};
      const body = JSON.stringify({
        command: [
          'sh',
          '-c',
          'echo applied >> /workspace/applied; while [ ! -e /workspace/go ]; do sleep 0.05; done; echo done > /workspace/done',
        ],
      });
      const pending = inside(
        t.client,
        session.id,
        `${GATEWAY} request -i -X POST -H 'content-type: application/json' -d '${body}' /api/sessions/${session.id}/exec`,
      );
      // The command runs (its first line is written), so the request is out on the host: cut the stream now.
      for (;;) {
        const seen = await inside(t.client, session.id, 'cat /workspace/applied 2>/dev/null; true');
        if (seen.stdout === 'applied\n') break;
      }
      cut();
      const answer = parseAnswer((await pending).stdout);
      expect(answer.status).toBe(504);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'indeterminate' } });
      await inside(t.client, session.id, 'touch /workspace/go');
      for (;;) {
        const done = await inside(t.client, session.id, 'cat /workspace/done 2>/dev/null; true');
        if (done.stdout === 'done\n') break;
      }
      expect((await inside(t.client, session.id, 'cat /workspace/applied')).stdout).toBe('applied\n');
      // The channel is lost for good; the next request goes over the file bridge.
      await callUntilOk(session.id, `/api/sessions/${session.id}`);
      expect((await inside(t.client, session.id, 'cat /workspace/applied')).stdout).toBe('applied\n');
      await t.client.sessions.end(session.id);
    });

    const { warm: warmUp, clients, each } = provider.flood;
    it(`${(clients * each).toLocaleString('en')} requests over duplex with the server's memory bounded; ending the session leaves no gateway behind`, {
      timeout: 180_000,
    }, async () => {
      const t = server();
      const { session, status } = await startSession();
      expect(status?.transport).toBe('duplex_v1');
      const port = new URL(status!.url).port;
      const warm = await inside(t.client, session.id, `${GATEWAY} request --repeat ${warmUp} /upstreams/echo/v1/ping`);
      expect(warm.stdout).toBe(`200 ${warmUp}\n`);
      collectGarbage();
      const before = process.memoryUsage();
      // `clients` clients of `each` requests, at once: up to `clients` requests in flight.
      const flood = await t.client.sessions.exec(session.id, {
        command: ['sh', '-c', `for i in $(seq ${clients}); do ${GATEWAY} request --repeat ${each} /upstreams/echo/v1/ping & done; wait`],
        timeoutMs: 170_000,
      });
      expect(flood.stdout.trim().split('\n')).toEqual(Array.from({ length: clients }, () => `200 ${each}`));
      collectGarbage();
      const after = process.memoryUsage();
      // Generous: what a leak of the requests (10,000 × bodies, ids, closures) would exceed many times over.
      expect(after.heapUsed - before.heapUsed).toBeLessThan(96 * 1024 * 1024);
      expect(after.rss - before.rss).toBeLessThan(256 * 1024 * 1024);
      expect(gatewaysOnPort(port)).toBe(1);
      await t.client.sessions.end(session.id);
      expect(gatewaysOnPort(port)).toBe(0);
    });
  });
}
