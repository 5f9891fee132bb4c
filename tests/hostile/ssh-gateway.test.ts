import { spawn } from 'node:child_process';
import type { SandcastClient } from '@sandcast/client';
import { testDatabases } from '@sandcast/db/testing';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { enableEnvironments, type TestServer } from '../integration/support/harness.ts';
import { openSshProgram, SSH_CLIENT_OPTIONS } from '../integration/support/openssh.ts';
import { ssh2Connect, ssh2Shell } from '../integration/support/ssh2-client.ts';
import { TextCollector } from '../integration/support/text-collector.ts';
import { attack, startHostileServer } from './support/attack.ts';

const ssh = openSshProgram('ssh');
/** The gateway's defaults (login-throttle.ts, ssh-gateway.ts). */
const FREE_FAILURES = 5;
const MAX_CHANNELS = 4;

/** A clock that moves only when the test moves it, so back-off windows never lapse on their own. */
const frozenClock = () => {
  let now = Date.now();
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
};

/**
 * One login attempt from `source` (any of 127.0.0.0/8): `checked` when the gateway looked at the
 * credential and refused it, `refused` when it answered with the back-off banner instead, or
 * `accepted`.
 */
function login(port: number, username: string, source: string): Promise<{ outcome: 'accepted' | 'checked' | 'refused'; banner: string }> {
  return new Promise((resolve) => {
    const client = new ssh2.Client();
    let banner = '';
    let outcome: 'accepted' | 'checked' | 'refused' | null = null;
    client.on('banner', (message: string) => {
      banner += message;
    });
    client.on('ready', () => {
      outcome = 'accepted';
      client.end();
    });
    client.on('error', () => {
      outcome ??= banner ? 'refused' : 'checked';
    });
    client.on('close', () => resolve({ outcome: outcome ?? (banner ? 'refused' : 'checked'), banner }));
    client.connect({
      host: '127.0.0.1',
      port,
      username,
      localAddress: source,
      authHandler: [{ type: 'none', username }],
      readyTimeout: 15_000,
    });
  });
}

const badToken = (i: number) => `scs${String(i).padStart(43, 'x')}`;

describe.skipIf(ssh.skipReason !== null)('SSH gateway under attack', () => {
  let t: TestServer;
  let port: number;
  const clock = frozenClock();
  let environments = 0;

  const runningSetup = async (client: SandcastClient) => {
    const env = await client.environments.create({ name: `hostile-ssh-${++environments}`, provider: 'fake', config: {} });
    const started = await client.customImages.startSetup(env.id);
    if (started.connectionPayload?.type !== 'ssh') throw new Error('expected an SSH payload');
    return { session: started.session, username: started.connectionPayload.username };
  };

  beforeAll(async () => {
    t = await startHostileServer({ database: testDatabases().find((d) => d.kind === 'pglite')!, clock, env: { SANDCAST_SSH_PORT: '0' } });
    port = t.server.sshGateway!.port;
    await enableEnvironments(t.client);
  });
  afterAll(async () => {
    await t?.close();
  });

  attack('a burst of bad credentials from one source backs off exponentially; another source is not penalised', async () => {
    const { username } = await runningSetup(t.client);
    const attacker = '127.0.0.2';
    const burst = [];
    for (let i = 0; i < 30; i++) burst.push((await login(port, badToken(i), attacker)).outcome);
    // The free failures and the one that started the back-off were checked; the rest never were.
    expect(burst.filter((o) => o === 'checked')).toHaveLength(FREE_FAILURES + 1);
    expect(burst.slice(FREE_FAILURES + 1).every((o) => o === 'refused')).toBe(true);

    // While it backs off, even a valid credential from that source is refused, with the reason.
    const blocked = await login(port, username, attacker);
    expect(blocked.outcome).toBe('refused');
    expect(blocked.banner).toMatch(/6 failed logins from 127\.0\.0\.2; logins from this address are refused for another 1 s/);

    // Another source logs in and works.
    const other = await ssh2Connect({ port, username, localAddress: '127.0.0.3' });
    const shell = await ssh2Shell(other.client);
    shell.channel.write('echo "other-$((6*7))"\n');
    await shell.output.waitFor('other-42');
    other.client.end();

    // The back-off doubles: 1 s after the 6th failure one attempt is checked, then 2 s, then 4 s.
    for (const delay of [1000, 2000, 4000]) {
      clock.advance(delay - 1);
      expect((await login(port, badToken(99), attacker)).outcome).toBe('refused');
      clock.advance(1);
      expect((await login(port, badToken(99), attacker)).outcome).toBe('checked');
      expect((await login(port, badToken(99), attacker)).outcome).toBe('refused');
    }

    // Once the window passes, a valid login succeeds and clears the record.
    clock.advance(8000);
    expect((await login(port, username, attacker)).outcome).toBe('accepted');
    const again = [];
    for (let i = 0; i < FREE_FAILURES + 1; i++) again.push((await login(port, badToken(i), attacker)).outcome);
    expect(again).toEqual(Array(FREE_FAILURES + 1).fill('checked'));
    clock.advance(60_000);
  });

  attack('fifty bad logins sent at once from one source are not all checked', async () => {
    const attacker = '127.0.0.7';
    const refusedBefore = t.logs.filter((line) => line.includes('ssh login refused: back-off')).length;
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => login(port, badToken(i), attacker)));
    expect(outcomes.every((o) => o.outcome !== 'accepted')).toBe(true);
    // The gateway logs every login it refused without looking at the credential.
    const refusedUnchecked = t.logs.filter((line) => line.includes('ssh login refused: back-off')).length - refusedBefore;
    expect(refusedUnchecked).toBe(50 - (FREE_FAILURES + 1));
    clock.advance(60_000);
  });

  attack('the OpenSSH client is told why it is refused', async () => {
    const attacker = '127.0.0.4';
    for (let i = 0; i <= FREE_FAILURES; i++) expect((await login(port, badToken(i), attacker)).outcome).toBe('checked');
    const options = SSH_CLIENT_OPTIONS.map((option) => (option === 'LogLevel=ERROR' ? 'LogLevel=INFO' : option));
    const child = spawn('ssh', [...options, '-b', attacker, '-p', String(port), `${badToken(0)}@127.0.0.1`, 'true'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stderr = new TextCollector();
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(255);
    expect(stderr.value).toMatch(/failed logins from 127\.0\.0\.4; logins from this address are refused for another \d+ s/);
    expect(stderr.value).toMatch(/Permission denied/);
    clock.advance(60_000);
  });

  attack(`a connection gets ${MAX_CHANNELS} sessions; the next is refused with a message, and a closed one frees its place`, async () => {
    const { username } = await runningSetup(t.client);
    const connection = await ssh2Connect({ port, username, localAddress: '127.0.0.5' });
    const shells = [];
    for (let i = 0; i < MAX_CHANNELS; i++) {
      const shell = await ssh2Shell(connection.client);
      shell.channel.write(`echo "shell-$((${i}+100))"\n`);
      await shell.output.waitFor(`shell-${i + 100}`);
      shells.push(shell);
    }
    const extra = await ssh2Shell(connection.client);
    expect(await extra.exit).toEqual({ code: 1, signal: null });
    expect(extra.output.value).toMatch(
      /this connection already has 4 sessions open, the most one connection may hold \(SANDCAST_SSH_MAX_CHANNELS_PER_CONNECTION\)/,
    );
    // The first four still work.
    for (const [i, shell] of shells.entries()) {
      shell.channel.write(`echo "still-$((${i}+200))"\n`);
      await shell.output.waitFor(`still-${i + 200}`);
    }
    // One ends: its place is free again.
    shells[0]!.channel.write('exit\n');
    await shells[0]!.closed;
    const replacement = await ssh2Shell(connection.client);
    replacement.channel.write('echo "replacement-$((3*3))"\n');
    await replacement.output.waitFor('replacement-9');
    connection.client.end();
    await connection.closed;
  });

  attack('fifty channel opens at once on one connection get four shells and no more', async () => {
    const { username } = await runningSetup(t.client);
    const connection = await ssh2Connect({ port, username, localAddress: '127.0.0.6' });
    const opened = await Promise.allSettled(
      Array.from(
        { length: 50 },
        () =>
          new Promise<string>((resolve, reject) =>
            connection.client.exec('echo "ran-$((1+1))"; sleep 30', (error, channel) => {
              if (error) return reject(error);
              const output = new TextCollector();
              channel.on('data', (chunk: Buffer) => output.push(chunk));
              channel.stderr.on('data', (chunk: Buffer) => output.push(chunk));
              channel.on('close', () => resolve(output.value));
              output.waitFor('ran-2').then(
                () => resolve('ran'),
                () => undefined,
              );
            }),
          ),
      ),
    );
    const ran = opened.filter((o) => o.status === 'fulfilled' && o.value === 'ran');
    expect(ran).toHaveLength(MAX_CHANNELS);
    const told = opened.filter((o) => o.status === 'fulfilled' && /sessions open, the most one connection may hold/.test(o.value));
    expect(told.length).toBeGreaterThanOrEqual(1);
    connection.client.end();
    await connection.closed;
    // The server still serves.
    expect((await t.fetch('/api/health')).status).toBe(200);
  });

  attack('port forwarding, remote forwarding and SFTP are refused, and the connection still serves a shell', async () => {
    const { username } = await runningSetup(t.client);
    const connection = await ssh2Connect({ port, username, localAddress: '127.0.0.8' });
    const { client } = connection;
    await expect(
      new Promise((resolve, reject) =>
        client.forwardOut('127.0.0.1', 1, '127.0.0.1', t.server.sshGateway!.port, (e, s) => (e ? reject(e) : resolve(s))),
      ),
    ).rejects.toThrow(/Channel open failure/);
    await expect(
      new Promise((resolve, reject) => client.forwardIn('127.0.0.1', 0, (e, p) => (e ? reject(e) : resolve(p)))),
    ).rejects.toThrow(/Unable to bind|failed|refused/i);
    await expect(new Promise((resolve, reject) => client.sftp((e, s) => (e ? reject(e) : resolve(s))))).rejects.toThrow();
    const shell = await ssh2Shell(client);
    shell.channel.write('echo "still-$((9*9))"\n');
    await shell.output.waitFor('still-81');
    client.end();
    await connection.closed;
  });

  attack('absurd terminal sizes from an SSH client are held to 1000 and the shell works', async () => {
    const { username } = await runningSetup(t.client);
    const connection = await ssh2Connect({ port, username, localAddress: '127.0.0.9' });
    const shell = await new Promise<ssh2.ClientChannel>((resolve, reject) =>
      connection.client.shell({ term: 'xterm', cols: 100_000, rows: 0 }, (e, channel) => (e ? reject(e) : resolve(channel))),
    );
    const output = new TextCollector();
    shell.on('data', (chunk: Buffer) => output.push(chunk));
    shell.write('stty size\n');
    await output.waitFor(/\b24 1000\b/);
    shell.setWindow(4_000_000, 70_000, 0, 0);
    const from = output.length;
    shell.write('stty size\n');
    await output.waitFor(/\b1000 1000\b/, { from });
    connection.client.end();
    await connection.closed;
  });
});
