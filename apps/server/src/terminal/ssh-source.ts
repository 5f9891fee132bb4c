import type { Disposable, PtyStream } from '@sandcast/provider-sdk';
import ssh2 from 'ssh2';
import { sshFingerprint } from '../ssh-gateway/ssh-keys.ts';

/** The SSH endpoint presented a host key other than the one pinned for this setup session. */
export class HostKeyChangedError extends Error {
  constructor(
    readonly endpoint: string,
    readonly pinned: string,
    readonly presented: string,
  ) {
    super(
      `the SSH host key of ${endpoint} changed: pinned ${pinned} on first use for this setup session, now presented ${presented}. ` +
        'The connection was refused; if the sandbox was really replaced, start a new setup session.',
    );
    this.name = 'HostKeyChangedError';
  }
}

export interface SshSourceOptions {
  host: string;
  port: number;
  /** May carry the credential (the convention of providers such as Daytona): 'none' auth is tried first. */
  username: string;
  cols: number;
  rows: number;
  /** Sandcast's client key, offered after 'none' for endpoints that authorize it. */
  identityKey?: string | undefined;
  /** Pins on first use; answers whether `fingerprint` is the pinned one, and which that is. */
  verifyHostKey(fingerprint: string): Promise<{ ok: true } | { ok: false; pinned: string }>;
  readyTimeoutMs?: number | undefined;
}

/** Opens an interactive shell over SSH and presents it as a PtyStream (pause stops the SSH window). */
export function openSshSource(options: SshSourceOptions): Promise<PtyStream> {
  const endpoint = `${options.host}:${options.port}`;
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    let refused: HostKeyChangedError | null = null;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      client.end();
      reject(refused ?? error);
    };
    client.on('error', (error) => fail(new Error(`SSH connection to ${endpoint} failed: ${error.message}`)));
    client.on('close', () => fail(new Error(`SSH connection to ${endpoint} closed before the shell opened`)));
    client.on('ready', () => {
      client.shell({ term: 'xterm-256color', cols: options.cols, rows: options.rows }, (error, channel) => {
        if (error) return fail(new Error(`SSH endpoint ${endpoint} refused a shell: ${error.message}`));
        settled = true;
        resolve(channelAsPty(client, channel));
      });
    });
    const methods: ssh2.AuthMethod[] = [{ type: 'none', username: options.username }];
    if (options.identityKey) {
      const publicKey: ssh2.PublicKeyAuthMethod = { type: 'publickey', username: options.username, key: options.identityKey };
      methods.push(publicKey);
    }
    client.connect({
      host: options.host,
      port: options.port,
      username: options.username,
      readyTimeout: options.readyTimeoutMs ?? 15_000,
      authHandler: methods,
      hostVerifier: (key: Buffer, verify: (valid: boolean) => void) => {
        const presented = sshFingerprint(key);
        options.verifyHostKey(presented).then(
          (outcome) => {
            if (!outcome.ok) refused = new HostKeyChangedError(endpoint, outcome.pinned, presented);
            verify(outcome.ok);
          },
          () => verify(false),
        );
      },
    });
  });
}

function channelAsPty(client: ssh2.Client, channel: ssh2.ClientChannel): PtyStream {
  let closed = false;
  const exitListeners = new Set<(exit: { exitCode: number | null; signal?: string | undefined }) => void>();
  let exitCode: number | null = null;
  let signal: string | undefined;
  channel.on('exit', (code: number | null, sig?: string) => {
    exitCode = code;
    signal = sig ?? undefined;
  });
  const finish = () => {
    if (closed) return;
    closed = true;
    client.end();
    for (const listener of exitListeners) listener({ exitCode, signal });
  };
  channel.on('close', finish);
  client.on('close', finish);
  // A write racing the channel's close surfaces as an 'error'; unheard, it would end the server.
  channel.on('error', finish);
  channel.stderr.on('error', () => undefined);
  return {
    write: (data) => {
      if (!closed) channel.write(data);
    },
    resize: (cols, rows) => {
      if (!closed) channel.setWindow(rows, cols, 0, 0);
    },
    onData: (listener): Disposable => {
      const forward = (chunk: Buffer) => listener(chunk);
      channel.on('data', forward);
      channel.stderr.on('data', forward);
      return {
        dispose: () => {
          channel.off('data', forward);
          channel.stderr.off('data', forward);
        },
      };
    },
    onExit: (listener): Disposable => {
      exitListeners.add(listener);
      return { dispose: () => exitListeners.delete(listener) };
    },
    // Paused, the channel stops granting window to the server, which stops sending.
    pause: () => channel.pause(),
    resume: () => channel.resume(),
    close: () => {
      if (closed) return;
      channel.close();
      finish();
    },
  };
}
