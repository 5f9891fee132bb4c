import { readdirSync, readFileSync } from 'node:fs';
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

const PROVIDERS: Array<{
  id: string;
  skipReason: () => Promise<string | null>;
  create: (dataDir: string) => SandboxProvider;
  config: Record<string, unknown>;
}> = [
  { id: 'local', skipReason: localSkipReason, create: (dataDir) => createLocalProvider({ dataDir }), config: {} },
  { id: 'docker', skipReason: dockerSkipReason, create: (dataDir) => createDockerProvider({ dataDir }), config: { image: TEST_IMAGE } },
];

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

      const activity = await server().client.activity({ limit: 50 });
      void sandboxId;
      expect(activity.length).toBeGreaterThan(0);
    });
  });
}
