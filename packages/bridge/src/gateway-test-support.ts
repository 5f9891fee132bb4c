import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { GATEWAY_SOURCE } from './gateway.ts';

/*
 * Helpers for the gateway's own tests, which run the C program on the host (it needs nothing from
 * a sandbox): build it with the repository's one static builder, pick a free port, start a mode.
 */

const BUILD_STATIC = fileURLToPath(new URL('../../provider-sdk/scripts/build-static.sh', import.meta.url));

let built: string | undefined;

/** The gateway binary, built (once per source change) by provider-sdk's build-static.sh. */
export function gatewayForTests(): string {
  built ??= execFileSync('/bin/sh', [BUILD_STATIC, GATEWAY_SOURCE, 'sandcast-gateway'], { encoding: 'utf8' }).trim();
  return built;
}

/** A TCP port free on 127.0.0.1 just now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts the gateway with `args` and collects its stdout lines as they come. */
export function startGateway(args: string[]): { child: ChildProcessWithoutNullStreams; lines: string[]; nextLine: () => Promise<string> } {
  const child = spawn(gatewayForTests(), args, { stdio: 'pipe' });
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let rest = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    rest += chunk;
    for (let at = rest.indexOf('\n'); at >= 0; at = rest.indexOf('\n')) {
      const line = rest.slice(0, at);
      rest = rest.slice(at + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const nextLine = () => {
    const line = lines.shift();
    return line !== undefined ? Promise.resolve(line) : new Promise<string>((resolve) => waiters.push(resolve));
  };
  return { child, lines, nextLine };
}

/** Sends raw bytes to 127.0.0.1:`port` and resolves with everything the peer answered before closing. */
export function rawHttp(port: number, data: Buffer | string): Promise<string> {
  return new Promise((resolve, reject) => {
    import('node:net').then(({ connect }) => {
      const socket = connect(port, '127.0.0.1');
      const parts: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => parts.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(parts).toString('latin1')));
      socket.end(data);
    }, reject);
  });
}
