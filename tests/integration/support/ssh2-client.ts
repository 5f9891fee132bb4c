import ssh2 from 'ssh2';
import { TextCollector } from './text-collector.ts';

export interface Ssh2Connection {
  client: ssh2.Client;
  /** Resolves when the TCP connection has closed. */
  closed: Promise<void>;
  /** Errors the client reported (a refused login, a dropped connection). */
  errors: Error[];
}

/**
 * An ssh2 client logged in to the gateway with `none` as the method (the credential is the
 * username). Rejects with the client's error when the login is refused. `localAddress` picks the
 * source address (any of 127.0.0.0/8), so a test can act as several sources.
 */
export function ssh2Connect(options: { port: number; username: string; localAddress?: string }): Promise<Ssh2Connection> {
  const client = new ssh2.Client();
  const errors: Error[] = [];
  const closed = new Promise<void>((resolve) => client.on('close', () => resolve()));
  return new Promise((resolve, reject) => {
    client.on('error', (error) => {
      errors.push(error);
      reject(error);
    });
    client.on('ready', () => resolve({ client, closed, errors }));
    client.connect({
      host: '127.0.0.1',
      port: options.port,
      username: options.username,
      localAddress: options.localAddress,
      authHandler: [{ type: 'none', username: options.username }],
      readyTimeout: 15_000,
    });
  });
}

export interface Ssh2Shell {
  channel: ssh2.ClientChannel;
  output: TextCollector;
  /** The channel's exit report: a status, or a signal name. */
  exit: Promise<{ code: number | null; signal: string | null }>;
  closed: Promise<void>;
}

/** Opens a shell with a PTY on an ssh2 connection. */
export function ssh2Shell(client: ssh2.Client): Promise<Ssh2Shell> {
  return new Promise((resolve, reject) => {
    client.shell({ term: 'xterm', cols: 100, rows: 30 }, (error, channel) => {
      if (error) return reject(error);
      const output = new TextCollector();
      channel.on('data', (chunk: Buffer) => output.push(chunk));
      channel.stderr.on('data', (chunk: Buffer) => output.push(chunk));
      const exit = new Promise<{ code: number | null; signal: string | null }>((done) =>
        channel.on('exit', (code: number | null, signal?: string) => done({ code: signal ? null : code, signal: signal ?? null })),
      );
      const closed = new Promise<void>((done) => channel.on('close', () => done()));
      resolve({ channel, output, exit, closed });
    });
  });
}
