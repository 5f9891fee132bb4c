import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ProviderError } from './errors.ts';
import { staticBinary } from './static-binary.ts';

const FORWARDER = fileURLToPath(new URL('../forwarder/port-forwarder.mjs', import.meta.url));
const RELAY_SOURCE = fileURLToPath(new URL('../native/sandcast-port-relay.c', import.meta.url));

/**
 * The static C relay (native/sandcast-port-relay.c), built on first use; null when it cannot be
 * built (no gcc), and the slower node relay under nsenter is used.
 */
const relayBinary = (): Promise<string | null> => staticBinary(RELAY_SOURCE).catch(() => null);

/** How long the forwarder may take to start and connect before the attempt is abandoned. */
const CONNECT_DEADLINE_MS = 10_000;

/**
 * A byte stream to TCP `port` on the loopback of the network namespace at `netnsPath`
 * (`/proc/<pid>/ns/net` of a sandbox's init or container), for providers whose sandboxes run on
 * this host. The sandbox gets no route out: a short-lived relay process enters only that namespace
 * and relays bytes over its stdin/stdout — a static C program (about 1 ms to start), or this host's
 * node under nsenter where it cannot be built (docs/decisions/0015-sandbox-ports.md).
 * A sandbox that shares the host's own network is refused: its "loopback" is the host's.
 */
export async function openNamespacedPortStream(options: { provider: string; netnsPath: string; port: number }): Promise<Duplex> {
  const { provider, netnsPath, port } = options;
  const fail = (code: ProviderError['code'], message: string, cause?: unknown) => new ProviderError({ provider, code, message, cause });
  const [target, own] = await Promise.all([stat(netnsPath).catch(() => null), stat('/proc/self/ns/net')]);
  if (!target) throw fail('not_running', 'the sandbox has no running network namespace; recreate it');
  if (target.ino === own.ino && target.dev === own.dev) {
    throw fail('unsupported', "the sandbox shares the host's network (network: host); its ports cannot be forwarded, use network: none");
  }
  const binary = await relayBinary();
  const [file, args] = binary
    ? [binary, [netnsPath, String(port)]]
    : ['nsenter', [`--net=${netnsPath}`, '--', process.execPath, FORWARDER, String(port)]];
  const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 2000) stderr += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(fail('timeout', `nothing answered on port ${port} inside the sandbox in time`));
    }, CONNECT_DEADLINE_MS);
    const done = (error?: Error) => {
      clearTimeout(timer);
      child.stdout.off('readable', onReadable);
      child.off('close', onClose);
      child.off('error', onError);
      if (error) reject(error);
      else resolve();
    };
    const onReadable = () => {
      const first = child.stdout.read(1) as Buffer | null;
      if (first === null) return;
      if (first[0] !== 0x2b) done(fail('backend', 'the port forwarder answered with an unexpected byte'));
      else done();
    };
    const onClose = () => {
      const refused = stderr.startsWith('ECONNREFUSED');
      done(
        fail(
          refused ? 'not_found' : 'backend',
          refused
            ? `nothing listens on port ${port} inside the sandbox (on 127.0.0.1 or 0.0.0.0)`
            : `the port forwarder failed: ${stderr.trim()}`,
        ),
      );
    };
    const onError = (error: Error) => done(fail('unavailable', `cannot start nsenter to reach the sandbox: ${error.message}`, error));
    child.stdout.on('readable', onReadable);
    child.once('close', onClose);
    child.once('error', onError);
  });
  const stream = Duplex.from({ readable: child.stdout, writable: child.stdin });
  child.stdin.on('error', () => undefined);
  stream.once('close', () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  child.once('close', () => stream.destroy());
  return stream;
}

/** A listener on a sandbox's loopback that relays every connection to a unix socket on the host. */
export interface NamespacedListener {
  /** Host pid of the relay (it lives in the sandbox's network namespace only). */
  readonly pid: number;
  /** Resolves once the relay has exited (closed, killed, or its namespace went away). */
  readonly exited: Promise<void>;
  close(): void;
}

/**
 * Listens on 127.0.0.1:`port` inside the network namespace at `netnsPath` and relays each
 * connection to the unix socket `socketPath` on the host (the egress proxy's way in,
 * docs/decisions/0027-egress-proxy.md). The sandbox gets a loopback port and nothing else: the
 * relay joins only its network namespace, the socket is a path in the host's filesystem. Needs
 * the static relay (gcc to build it); a sandbox sharing the host's network is refused.
 */
export async function listenInNamespace(options: {
  provider: string;
  netnsPath: string;
  port: number;
  socketPath: string;
}): Promise<NamespacedListener> {
  const { provider, netnsPath, port, socketPath } = options;
  const fail = (code: ProviderError['code'], message: string) => new ProviderError({ provider, code, message });
  const [target, own] = await Promise.all([stat(netnsPath).catch(() => null), stat('/proc/self/ns/net')]);
  if (!target) throw fail('not_running', 'the sandbox has no running network namespace; start it first');
  if (target.ino === own.ino && target.dev === own.dev) {
    throw fail('unsupported', "the sandbox shares the host's network (network: host); egress through the proxy needs network: none");
  }
  const binary = await relayBinary();
  if (!binary) throw fail('unavailable', 'the egress relay cannot be built: install gcc and libc6-dev (apt-get install gcc libc6-dev)');
  const child = spawn(binary, ['--listen', netnsPath, String(port), socketPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 2000) stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(fail('timeout', `the egress relay did not start listening on port ${port} in time`));
    }, CONNECT_DEADLINE_MS);
    child.stdout.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      if (chunk[0] === 0x2b) resolve();
      else {
        child.kill('SIGKILL');
        reject(fail('backend', 'the egress relay answered with an unexpected byte'));
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(fail('unavailable', `cannot start the egress relay: ${error.message}`));
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(fail('backend', `the egress relay exited: ${stderr.trim() || `code ${child.exitCode}`}`));
    });
  });
  child.stdout.resume();
  return {
    pid: child.pid ?? 0,
    exited,
    close: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}
