import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import type { SandcastClient } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import { createMovableClock, loadConfig } from '@sandcast/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';
import { openSshProgram, runSsh, SSH_CLIENT_OPTIONS } from './support/openssh.ts';
import { ssh2Connect, ssh2Shell } from './support/ssh2-client.ts';
import { TextCollector } from './support/text-collector.ts';

const ssh = openSshProgram('ssh');

let environmentCount = 0;
async function runningSetup(client: SandcastClient, ttlSeconds = 3600) {
  const env = await client.environments.create({ name: `gw-${++environmentCount}`, provider: 'fake', config: {} });
  const started = await client.customImages.startSetup(env.id, { ttlSeconds });
  const payload = started.connectionPayload;
  if (payload?.type !== 'ssh') throw new Error(`expected an SSH payload, got ${JSON.stringify(payload)}`);
  return { session: started.session, payload };
}

for (const database of testDatabases()) {
  describe.skipIf(database.skipReason !== null || ssh.skipReason !== null)(`SSH gateway with the OpenSSH client [${database.kind}]`, () => {
    let t: TestServer;
    let port: number;
    const clock = createMovableClock();

    beforeAll(async () => {
      t = await startTestServer({ database, clock, env: { SANDCAST_SSH_PORT: '0' } });
      port = t.server.sshGateway!.port;
      await enableEnvironments(t.client);
    });
    afterAll(async () => {
      await t?.close();
    });

    it('hands out an ssh command with a fresh credential; the host key is kept in the data dir (0600)', async () => {
      const { session, payload } = await runningSetup(t.client);
      expect(port).toBeGreaterThan(0);
      expect(payload).toMatchObject({ type: 'ssh', host: '127.0.0.1', port, expiresAt: session.expiresAt });
      expect(payload.username).toMatch(/^scs[A-Za-z0-9]{43}$/);
      expect(payload.token).toBe(payload.username);
      expect(payload.command).toBe(`ssh -p ${port} ${payload.username}@127.0.0.1`);
      expect(session.connectionSummary).toEqual({ type: 'pty' }); // nothing secret stored
      expect((await stat(path.join(t.dataDir, 'ssh', 'gateway_host_ed25519_key'))).mode & 0o777).toBe(0o600);
      // A second session gets another credential.
      const other = await runningSetup(t.client);
      expect(other.payload.username).not.toBe(payload.username);
    });

    it('runs a command: output, exit status, stdin, and the files land in the setup sandbox', async () => {
      const { session, payload } = await runningSetup(t.client);
      const target = `${payload.username}@127.0.0.1`;
      const ran = await runSsh(['-p', String(port), target, 'echo hi; echo "in $(basename "$PWD")"; exit 3']);
      expect(ran).toMatchObject({ code: 3, stdout: 'hi\nin workspace\n' });
      const piped = await runSsh(['-p', String(port), target, 'cat > from-ssh.txt; wc -c < from-ssh.txt'], { input: 'payload line\n' });
      expect(piped.code, piped.stderr).toBe(0);
      expect(piped.stdout.trim()).toBe('13');
      const read = await t.client.customImages.exec(session.id, { command: ['cat', 'from-ssh.txt'] });
      expect(read.stdout).toBe('payload line\n');
    });

    it('opens an interactive shell through a PTY (ssh -tt)', async () => {
      const { payload } = await runningSetup(t.client);
      const result = await runSsh(['-tt', '-p', String(port), `${payload.username}@127.0.0.1`], {
        input: 'tty; stty size; echo "v=$((2+3))"; exit 7\n',
      });
      expect(result.code, result.stderr).toBe(7);
      expect(result.stdout).toMatch(/\/dev\/pts\/\d+/);
      expect(result.stdout).toContain('v=5');
    });

    it('refuses unknown, cancelled and expired credentials, and other auth methods', async () => {
      const denied = (r: { code: number | null; stderr: string }) => {
        expect(r.code).toBe(255);
        expect(r.stderr).toMatch(/Permission denied/);
      };
      denied(await runSsh(['-p', String(port), `scs${'x'.repeat(43)}@127.0.0.1`, 'true']));
      denied(await runSsh(['-p', String(port), 'root@127.0.0.1', 'true']));

      const cancelled = await runningSetup(t.client);
      await t.client.customImages.cancel(cancelled.session.id);
      denied(await runSsh(['-p', String(port), `${cancelled.payload.username}@127.0.0.1`, 'echo should-not-run']));

      const expiring = await runningSetup(t.client, 120);
      expect((await runSsh(['-p', String(port), `${expiring.payload.username}@127.0.0.1`, 'echo ok'])).stdout).toBe('ok\n');
      clock.advance(121_000);
      denied(await runSsh(['-p', String(port), `${expiring.payload.username}@127.0.0.1`, 'echo should-not-run']));
      expect((await t.client.customImages.getSetup(expiring.session.id)).session.status).toBe('timed_out');
    });

    it('closes open connections when the setup session is cancelled', async () => {
      const { session, payload } = await runningSetup(t.client);
      const child = spawn('ssh', [...SSH_CLIENT_OPTIONS, '-tt', '-p', String(port), `${payload.username}@127.0.0.1`], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const out = new TextCollector();
      child.stdout.on('data', (c: Buffer) => out.push(c));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdin.write('echo "ready-$((40+2))"\n');
      await out.waitFor('ready-42');
      await t.client.customImages.cancel(session.id);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      expect(await exited).not.toBeNull(); // ended by the server, not by the kill
      clearTimeout(timer);
    });
  });
}

describe('SSH gateway settings', () => {
  it('refuses a non-loopback SSH host in local_trusted mode, a bad port, and a port in use', async () => {
    expect(() => loadConfig({ SANDCAST_SSH_HOST: '0.0.0.0' })).toThrow(/SANDCAST_SSH_HOST=0.0.0.0 is not a loopback address/);
    expect(() => loadConfig({ SANDCAST_SSH_HOST: '0.0.0.0', SANDCAST_DEPLOYMENT_MODE: 'authenticated' })).not.toThrow();
    expect(() => loadConfig({ SANDCAST_SSH_PORT: 'ssh' })).toThrow(/SANDCAST_SSH_PORT must be a port number/);
    expect(loadConfig({ SANDCAST_SSH_PORT: 'off' }).sshPort).toBeNull();
    expect(loadConfig({}).sshPort).toBe(2222);
    expect(loadConfig({}).sshMaxChannelsPerConnection).toBe(4);
    expect(loadConfig({ SANDCAST_SSH_MAX_CHANNELS_PER_CONNECTION: '12' }).sshMaxChannelsPerConnection).toBe(12);
    for (const bad of ['0', '-1', '1.5', 'many', '1001']) {
      expect(() => loadConfig({ SANDCAST_SSH_MAX_CHANNELS_PER_CONNECTION: bad })).toThrow(
        `SANDCAST_SSH_MAX_CHANNELS_PER_CONNECTION must be a whole number from 1 to 1000; got "${bad}"`,
      );
    }

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      await expect(
        startTestServer({ database: testDatabases().find((d) => d.kind === 'pglite')!, env: { SANDCAST_SSH_PORT: String(port) } }),
      ).rejects.toThrow(new RegExp(`cannot listen on 127.0.0.1:${port}: the port is in use`));
    } finally {
      taken.close();
    }
  });
});

describe.skipIf(ssh.skipReason !== null)('SSH gateway session cap setting', () => {
  it('honours SANDCAST_SSH_MAX_CHANNELS_PER_CONNECTION', async () => {
    const t = await startTestServer({
      database: testDatabases().find((d) => d.kind === 'pglite')!,
      env: { SANDCAST_SSH_PORT: '0', SANDCAST_SSH_MAX_CHANNELS_PER_CONNECTION: '1' },
    });
    try {
      await enableEnvironments(t.client);
      const { payload } = await runningSetup(t.client);
      const connection = await ssh2Connect({ port: t.server.sshGateway!.port, username: payload.username });
      const first = await ssh2Shell(connection.client);
      first.channel.write('echo "first-$((1+1))"\n');
      await first.output.waitFor('first-2');
      const second = await ssh2Shell(connection.client);
      expect(await second.exit).toEqual({ code: 1, signal: null });
      expect(second.output.value).toContain('this connection already has 1 session open, the most one connection may hold');
      connection.client.end();
      await connection.closed;
    } finally {
      await t.close();
    }
  });
});
