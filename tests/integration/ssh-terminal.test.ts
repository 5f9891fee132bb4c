import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { testDatabases } from '@sandcast/db/testing';
import { createFakeProvider } from '@sandcast/provider-fake';
import type { SandboxProvider } from '@sandcast/provider-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableEnvironments, startTestServer, type TestServer } from './support/harness.ts';
import { openSshProgram } from './support/openssh.ts';
import { attachTerminal, rawTerminalSocket } from './support/terminal-client.ts';
import { TextCollector } from './support/text-collector.ts';

const sshd = openSshProgram('sshd');
const keygen = openSshProgram('ssh-keygen');
const skipReason = sshd.skipReason ?? keygen.skipReason;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const fingerprintOf = (publicKeyFile: string) =>
  execFileSync(keygen.path!, ['-l', '-E', 'sha256', '-f', publicKeyFile], { encoding: 'utf8' }).split(' ')[1]!;

/** A real OpenSSH server on a loopback port, with a host key of the test's choosing. */
class TestSshd {
  private child: ChildProcess | null = null;
  log = '';
  constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  async start(hostKey: string): Promise<void> {
    const config = path.join(this.dir, 'sshd_config');
    await writeFile(
      config,
      [
        `Port ${this.port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKey}`,
        `PidFile ${path.join(this.dir, 'sshd.pid')}`,
        'UsePAM no',
        'PermitRootLogin yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        `AuthorizedKeysFile ${path.join(this.dir, 'authorized_keys')}`,
        'StrictModes no',
        'PrintMotd no',
        'PrintLastLog no',
        '',
      ].join('\n'),
    );
    // sshd refuses to start without its privilege separation directory (the init script makes it).
    await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
    const child = spawn(sshd.path!, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    const log = new TextCollector();
    child.stderr!.on('data', (c: Buffer) => {
      log.push(c);
      this.log = log.value;
    });
    this.child = child;
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`sshd exited (${code}) before listening: ${log.value}`))),
    );
    exited.catch(() => undefined);
    await Promise.race([log.waitFor('Server listening', { timeoutMs: 10_000 }), exited]);
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    this.child = null;
  }
}

/** The fake provider, except its setup sandbox is reached over SSH (as with Daytona). */
function fakeOverSsh(dataDir: string, endpoint: { port: number; username: string }): SandboxProvider {
  const base = createFakeProvider({ dataDir, id: 'fake-ssh', displayName: 'Fake over SSH' });
  return {
    ...base,
    startInteractiveSetup: async (request) => {
      const lease = await base.startInteractiveSetup(request);
      return {
        leaseId: lease.leaseId,
        connection: {
          type: 'ssh',
          host: '127.0.0.1',
          port: endpoint.port,
          username: endpoint.username,
          command: `ssh -p ${endpoint.port} ${endpoint.username}@127.0.0.1`,
        },
      };
    },
  };
}

describe.skipIf(skipReason !== null)('browser terminal over SSH against a real OpenSSH server', () => {
  let t: TestServer;
  let dir: string;
  let server: TestSshd;
  const username = userInfo().username;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sandcast-sshd-'));
    for (const name of ['host_a', 'host_b']) execFileSync(keygen.path!, ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, name)]);
    server = new TestSshd(dir, await freePort());
    t = await startTestServer({
      database: testDatabases().find((d) => d.kind === 'pglite')!,
      providers: (dataDir) => [fakeOverSsh(dataDir, { port: server.port, username })],
    });
    // Sandcast's client key lives in its data dir; this sshd authorizes it, as a provider would.
    await mkdir(path.join(t.dataDir, 'ssh'), { recursive: true });
    execFileSync(keygen.path!, ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(t.dataDir, 'ssh', 'client_ed25519')]);
    await writeFile(path.join(dir, 'authorized_keys'), await readFile(path.join(t.dataDir, 'ssh', 'client_ed25519.pub')));
    await server.start(path.join(dir, 'host_a'));
    await enableEnvironments(t.client);
  });
  afterAll(async () => {
    await server?.stop();
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('attaches over SSH, pins the host key on first use, and refuses a changed key', async () => {
    const env = await t.client.environments.create({ name: 'over-ssh', provider: 'fake-ssh', config: {} });
    const { session, connectionPayload } = await t.client.customImages.startSetup(env.id);
    expect(connectionPayload).toMatchObject({ type: 'ssh', port: server.port, username });
    expect(session.connectionSummary).toEqual({ type: 'ssh', host: '127.0.0.1', port: server.port });

    const token = await t.client.customImages.terminalSessionToken(session.id);
    expect(token.connectionType).toBe('ssh');
    const first = await attachTerminal(t.url, token);
    first.type('echo "who=$(id -un) via=$(test -n "$SSH_CONNECTION" && echo ssh)"\r');
    await first.waitFor(`who=${username} via=ssh`);

    // The pin is in the database: probing with another fingerprint shows which one is pinned.
    const pinA = fingerprintOf(path.join(dir, 'host_a.pub'));
    const probe = { setupSessionId: session.id, host: '127.0.0.1', port: server.port, fingerprint: 'SHA256:probe' };
    expect(await t.server.store.repos.terminalSessions.pinHostKey(probe)).toEqual({ ok: false, pinned: pinA });

    // The shell ends with `exit`: the terminal closes with ssh_closed.
    first.type('exit\r');
    expect(await first.connection.closed).toMatchObject({ code: 1000, reason: 'ssh_closed' });

    // A new connection to the same key is fine.
    const second = await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(session.id));
    expect(await second.connection.ready).toMatchObject({ reattached: false });
    second.type('exit\r');
    await second.connection.closed;

    // The endpoint comes back with another host key: refused, clearly, and the socket closed.
    await server.stop();
    await server.start(path.join(dir, 'host_b'));
    const changed = await t.client.customImages.terminalSessionToken(session.id);
    const socket = rawTerminalSocket(t.url, changed.websocketPath);
    await socket.opened;
    socket.sendJson({ type: 'auth', token: changed.token });
    expect((await socket.closed).code).toBe(1008);
    expect(socket.error()).toContain(`the SSH host key of 127.0.0.1:${server.port} changed: pinned ${pinA}`);
    expect(socket.error()).toContain(`now presented ${fingerprintOf(path.join(dir, 'host_b.pub'))}`);
    expect(await t.server.store.repos.terminalSessions.pinHostKey(probe)).toEqual({ ok: false, pinned: pinA });

    // The setup ends: the terminal's source is gone with it.
    await server.stop();
    await server.start(path.join(dir, 'host_a'));
    const third = await attachTerminal(t.url, await t.client.customImages.terminalSessionToken(session.id));
    await t.client.customImages.cancel(session.id);
    expect(await third.connection.closed).toMatchObject({ reason: 'setup_cancelled' });
  });
});
