import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import ssh2 from 'ssh2';
import { shellQuoteForFake } from './fake-http.ts';

export interface FakeSsh {
  port: number;
  close(): Promise<void>;
}

/**
 * Daytona's SSH endpoint as the fake offers it: the user name is the access token (nothing
 * else is asked), a shell runs in the sandbox's container under a terminal, an exec request
 * runs its command there.
 */
export async function startFakeSsh(deps: { containerOf: (token: string) => string | null }): Promise<FakeSsh> {
  const hostKey = ssh2.utils.generateKeyPairSync('ed25519').private;
  const server = new ssh2.Server({ hostKeys: [hostKey] }, (client) => {
    let container: string | null = null;
    client.on('authentication', (ctx) => {
      container = deps.containerOf(ctx.username);
      if (container) ctx.accept();
      else ctx.reject();
    });
    client.on('ready', () => {
      client.on('session', (accept) => {
        const session = accept();
        let pty = false;
        session.on('pty', (acceptPty) => {
          pty = true;
          acceptPty?.();
        });
        const attach = (channel: ssh2.ServerChannel, script: string) => {
          // `script` gives `docker exec -t` the terminal it needs when the client asked for one.
          const args = pty ? ['-qfec', `docker exec -it ${container} sh -c ${shellQuoteForFake(script)}`, '/dev/null'] : null;
          const child = args
            ? spawn('script', args, { stdio: ['pipe', 'pipe', 'pipe'] })
            : spawn('docker', ['exec', '-i', container!, 'sh', '-c', script], { stdio: ['pipe', 'pipe', 'pipe'] });
          channel.pipe(child.stdin);
          child.stdout.pipe(channel, { end: false });
          child.stderr.pipe(channel.stderr, { end: false });
          child.on('close', (code) => {
            channel.exit(code ?? 1);
            channel.end();
          });
          channel.on('close', () => child.kill());
        };
        session.on('shell', (acceptShell) => attach(acceptShell(), 'cd /workspace 2>/dev/null; exec bash -l 2>/dev/null || exec sh -l'));
        session.on('exec', (acceptExec, _reject, info) => attach(acceptExec(), info.command));
      });
    });
    client.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
