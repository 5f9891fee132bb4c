import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { SandcastClient } from '@sandcast/client';
import { TEST_IMAGE } from '@sandcast/provider-docker/testing';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSshProgram, SSH_CLIENT_OPTIONS } from './support/openssh.ts';
import { type Ssh2Shell, ssh2Connect, ssh2Shell } from './support/ssh2-client.ts';
import { attachTerminal, rawTerminalSocket, type TestTerminal } from './support/terminal-client.ts';
import { type ServerProcess, startServerProcess } from './support/terminal-server-process.ts';
import { TextCollector } from './support/text-collector.ts';

const ssh = openSshProgram('ssh');

/**
 * Regression: an SSH client that went away (kill -9 of `ssh -tt`, an ssh2 `end()`) took the whole
 * server down with an uncaught `Invalid signal: 9` — node-pty reports the shell's signal as a
 * number, ssh2's exit-signal wants a name. The server runs in a process of its own here, so its
 * death is seen as such; after every way of going away, an HTTP request, a browser terminal and
 * another SSH session must still work.
 */
describe.skipIf(ssh.skipReason !== null)('a client that goes away never ends the server', () => {
  let server: ServerProcess;
  let client: SandcastClient;
  let bystanderTerminal: TestTerminal;
  let bystanderShell: Ssh2Shell;
  const sessions: string[] = [];
  let checks = 0;

  const startSetup = async (provider: string) => {
    const config = provider === 'docker' ? { image: TEST_IMAGE } : {};
    const env = await client.environments.create({ name: `gone-${provider}-${sessions.length}`, provider, config });
    const started = await client.customImages.startSetup(env.id);
    sessions.push(started.session.id);
    if (started.connectionPayload?.type !== 'ssh')
      throw new Error(`expected an SSH payload, got ${JSON.stringify(started.connectionPayload)}`);
    return { session: started.session, username: started.connectionPayload.username };
  };

  /** The server process is alive and serving HTTP, a browser terminal and another SSH session. */
  const stillServing = async (after: string) => {
    expect(server.exited(), `the server died after: ${after}\n${server.output().slice(-3000)}`).toBeNull();
    const n = ++checks;
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    bystanderTerminal.type(`echo "term-alive-$((${n}*2))"\r`);
    await bystanderTerminal.waitFor(`term-alive-${n * 2}`);
    bystanderShell.channel.write(`echo "ssh-alive-$((${n}*3))"\n`);
    await bystanderShell.output.waitFor(`ssh-alive-${n * 3}`);
  };

  beforeAll(async () => {
    server = await startServerProcess({ env: { SANDCAST_SSH_PORT: '0' } });
    client = new SandcastClient({ baseUrl: server.url });
    const bystander = await startSetup('fake');
    bystanderTerminal = await attachTerminal(server.url, await client.customImages.terminalSessionToken(bystander.session.id));
    const connection = await ssh2Connect({ port: server.sshPort!, username: bystander.username });
    bystanderShell = await ssh2Shell(connection.client);
  }, 90_000);
  afterAll(async () => {
    for (const id of sessions) await client?.customImages.cancel(id).catch(() => undefined);
    await server?.stop();
  });

  for (const provider of ['fake', 'local', 'docker'] as const) {
    it(`[${provider}] survives kill -9 of ssh, end() and destroy() mid-session, a dropped handshake, a terminated WebSocket and a killed shell`, {
      timeout: 180_000,
    }, async (ctx) => {
      const target = (await client.targets()).find((t) => t.provider === provider);
      if (!target?.available) {
        const reason = `the ${provider} provider cannot run here: ${target?.unavailableReason ?? 'not registered'}`;
        if (process.env.CI === 'true') throw new Error(`CI=true but ${reason}`);
        ctx.skip(reason);
      }
      const port = server.sshPort!;
      const { session, username } = await startSetup(provider);
      await stillServing('nothing yet');

      // 1. The real OpenSSH client with a PTY, killed with SIGKILL mid-session.
      const child = spawn('ssh', [...SSH_CLIENT_OPTIONS, '-tt', '-p', String(port), `${username}@127.0.0.1`], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const childOut = new TextCollector();
      child.stdout.on('data', (chunk: Buffer) => childOut.push(chunk));
      const childExit = new Promise((resolve) => child.on('close', resolve));
      child.stdin.write('echo "openssh-up-$((20+1))"\n');
      await childOut.waitFor('openssh-up-21');
      child.kill('SIGKILL');
      await childExit;
      await stillServing('kill -9 of an OpenSSH client');

      // 2. ssh2 end() and destroy(), with a quiet shell and with one pouring output.
      for (const how of ['end', 'destroy'] as const) {
        for (const busy of [false, true]) {
          const connection = await ssh2Connect({ port, username });
          const shell = await ssh2Shell(connection.client);
          shell.channel.write(busy ? 'yes flood-line\n' : 'echo "ssh2-up-$((30+3))"\n');
          await shell.output.waitFor(busy ? /(flood-line\r?\n){50}/ : 'ssh2-up-33');
          connection.client[how]();
          await connection.closed;
          await stillServing(`ssh2 ${how}() of a ${busy ? 'busy' : 'quiet'} shell`);
        }
      }

      // 3. A TCP connection dropped mid-handshake: after the identification line, inside key
      // exchange, and right after the login request (the server answers a client that is gone).
      const raw = connect(port, '127.0.0.1');
      const ident = new TextCollector();
      raw.on('data', (chunk: Buffer) => ident.push(chunk.toString('latin1')));
      raw.on('error', () => undefined);
      await ident.waitFor('SSH-2.0-');
      raw.write('SSH-2.0-OpenSSH_9.2\r\n');
      raw.write(Buffer.from([0, 0, 1, 0, 7, 20, 1, 2, 3]));
      raw.destroy();
      await stillServing('a TCP connection dropped inside key exchange');
      for (let i = 0; i < 3; i++) {
        const dropped = new ssh2.Client();
        const gone = new Promise<void>((resolve) => dropped.on('close', () => resolve()));
        dropped.on('error', () => undefined);
        dropped.connect({
          host: '127.0.0.1',
          port,
          username,
          authHandler: (_methods, _partial, next) => {
            next({ type: 'none', username });
            setImmediate(() => dropped.destroy());
          },
        });
        await gone;
      }
      await stillServing('clients dropped right after their login request');

      // 4. A browser terminal whose socket is cut without a close frame: attached, and while
      // authenticating.
      const viewer = await attachTerminal(server.url, await client.customImages.terminalSessionToken(session.id));
      viewer.type('echo "ws-up-$((40+4))"\r');
      await viewer.waitFor('ws-up-44');
      // The `ws` socket under the client: cut the TCP connection without a close frame.
      (viewer.connection.socket as unknown as { terminate(): void }).terminate();
      await viewer.connection.closed;
      const authenticating = rawTerminalSocket(server.url, (await client.customImages.terminalSessionToken(session.id)).websocketPath);
      await authenticating.opened;
      authenticating.sendJson({ type: 'auth', token: 'x'.repeat(43) });
      authenticating.socket.terminate();
      await authenticating.closed;
      await stillServing('browser terminals terminated without a close frame');

      // 5. The shell itself killed by a signal: SSH reports the signal's name (or 128+n for one SSH
      // has no name for), the browser terminal closes with ssh_closed. On the local provider the
      // shell runs under the sandbox's init, which exits 128+n itself; Docker reports 128+n too.
      for (const [signal, expected] of [
        ['KILL', provider === 'fake' ? { code: null, signal: 'SIGKILL' } : { code: 128 + 9, signal: null }],
        ['VTALRM', { code: 128 + 26, signal: null }],
      ] as const) {
        const connection = await ssh2Connect({ port, username });
        const shell = await ssh2Shell(connection.client);
        shell.channel.write(`echo "sig-up-$((50+5))"; kill -s ${signal} $$\n`);
        expect(await shell.exit).toEqual(expected);
        await shell.closed;
        connection.client.end();
        await stillServing(`an SSH shell killed by SIG${signal}`);
      }
      const killed = spawn('ssh', [...SSH_CLIENT_OPTIONS, '-tt', '-p', String(port), `${username}@127.0.0.1`], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const killedExit = new Promise<number | null>((resolve) => killed.on('close', resolve));
      killed.stdin.write('kill -9 $$\n');
      // OpenSSH exits 255 when the remote shell died of a signal; the local sandbox's init and Docker report 137.
      expect(await killedExit).toBe(provider === 'fake' ? 255 : 128 + 9);
      await stillServing('an OpenSSH session whose shell was killed');
      const terminal = await attachTerminal(server.url, await client.customImages.terminalSessionToken(session.id));
      terminal.type('kill -9 $$\r');
      expect(await terminal.connection.closed).toMatchObject({ code: 1000, reason: 'ssh_closed' });
      await stillServing('a browser terminal whose shell was killed');

      expect(server.output()).not.toMatch(/Invalid signal|uncaught/i);
    });
  }
});
