import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const UPSTREAM = fileURLToPath(new URL('./upstream-server.mjs', import.meta.url));

/** Why the egress network tests cannot run here (they need root, ip and openssl), or null. */
export async function testNetworkSkipReason(): Promise<string | null> {
  if (process.platform !== 'linux') return 'the egress network tests need Linux network namespaces';
  if (process.getuid?.() !== 0) return 'the egress network tests create a network namespace: run them as root';
  for (const tool of ['ip', 'openssl']) {
    const found = await run('/bin/sh', ['-c', `command -v ${tool}`]).then(
      () => true,
      () => false,
    );
    if (!found) return `${tool} is missing: apt-get install ${tool === 'ip' ? 'iproute2' : 'openssl'}`;
  }
  return null;
}

/**
 * A network namespace of the test's own with a veth pair in a random /30 of 10.200.0.0/13: the
 * host keeps `hostAddress`, the namespace gets `upstreamAddress`, where an HTTP and an HTTPS
 * server answer (a self-signed certificate for `names`). Nothing else is reachable through it.
 */
export interface TestNetwork {
  namespace: string;
  hostAddress: string;
  upstreamAddress: string;
  httpPort: number;
  httpsPort: number;
  /** PEM of the upstream's self-signed certificate (trust it to verify the TLS tunnel). */
  certificate: string;
  /** Runs a command inside the namespace (`ip netns exec`). */
  exec(command: string[]): Promise<{ stdout: string; stderr: string }>;
  close(): Promise<void>;
}

export async function createTestNetwork(options: { names: string[] }): Promise<TestNetwork> {
  const tag = randomBytes(3).toString('hex');
  const namespace = `sce-${tag}`;
  const hostIf = `sceh${tag}`;
  const peerIf = `scep${tag}`;
  const base = [10, 200 + randomInt(8), randomInt(256), randomInt(64) * 4];
  const hostAddress = `${base[0]}.${base[1]}.${base[2]}.${base[3]! + 1}`;
  const upstreamAddress = `${base[0]}.${base[1]}.${base[2]}.${base[3]! + 2}`;
  const dir = await mkdtemp(join(tmpdir(), 'sandcast-egress-net-'));
  let upstream: ChildProcess | null = null;
  const close = async () => {
    upstream?.stdin?.end();
    upstream?.kill('SIGKILL');
    await run('ip', ['link', 'del', hostIf]).catch(() => undefined);
    await run('ip', ['netns', 'del', namespace]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await run('ip', ['netns', 'add', namespace]);
    await run('ip', ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', peerIf]);
    await run('ip', ['link', 'set', peerIf, 'netns', namespace]);
    await run('ip', ['addr', 'add', `${hostAddress}/30`, 'dev', hostIf]);
    await run('ip', ['link', 'set', hostIf, 'up']);
    await run('ip', ['-n', namespace, 'addr', 'add', `${upstreamAddress}/30`, 'dev', peerIf]);
    await run('ip', ['-n', namespace, 'link', 'set', peerIf, 'up']);
    await run('ip', ['-n', namespace, 'link', 'set', 'lo', 'up']);
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    const names = options.names.map((n) => `DNS:${n}`).join(',');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${options.names[0]}`,
      '-addext',
      `subjectAltName=${names}`,
      '-keyout',
      key,
      '-out',
      cert,
    ]);
    const httpPort = 8080;
    const httpsPort = 8443;
    const child = spawn(
      'ip',
      ['netns', 'exec', namespace, process.execPath, UPSTREAM, upstreamAddress, String(httpPort), String(httpsPort), cert, key],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    upstream = child;
    await new Promise<void>((resolve, reject) => {
      let err = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        err += chunk.toString();
      });
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`the upstream in ${namespace} exited (${code}): ${err}`)));
    });
    return {
      namespace,
      hostAddress,
      upstreamAddress,
      httpPort,
      httpsPort,
      certificate: await readFile(cert, 'utf8'),
      exec: (command) => run('ip', ['netns', 'exec', namespace, ...command]),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
