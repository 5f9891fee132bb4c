import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import type { SandboxContainment } from '@sandcast/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateAllowances } from './address-class.ts';
import { createEgressProxy, type EgressDecision, type EgressListener } from './egress-proxy.ts';
import { createTestNetwork, type TestNetwork, testNetworkSkipReason } from './testing/test-network.ts';

const skip = await testNetworkSkipReason();
if (skip && process.env.CI === 'true') throw new Error(`CI=true but the egress proxy tests cannot run: ${skip}`);
if (skip) console.warn(`[egress-proxy] skipped: ${skip}`);

/** What the proxy answered a CONNECT with, and the tunnel when it said 200. */
function connectThrough(socketPath: string, authority: string): Promise<{ status: number; body: string; socket: Socket | null }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'CONNECT', path: authority, headers: { host: authority }, agent: false });
    req.once('connect', (res, socket, head) => {
      if (res.statusCode === 200) return resolve({ status: 200, body: '', socket });
      let body = head.toString();
      socket.on('data', (c: Buffer) => {
        body += c.toString();
      });
      socket.once('end', () => resolve({ status: res.statusCode ?? 0, body, socket: null }));
    });
    req.once('error', reject);
    req.end();
  });
}

/** A plain HTTP request through the proxy (absolute-form). */
function getThrough(socketPath: string, url: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath, method: body ? 'POST' : 'GET', path: url, headers: { host: new URL(url).host }, agent: false },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
        });
        res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

/** An HTTPS GET over a CONNECT tunnel, verifying the upstream's certificate for `servername`. */
async function httpsThrough(socketPath: string, authority: string, servername: string, ca: string): Promise<string> {
  const tunnel = await connectThrough(socketPath, authority);
  if (!tunnel.socket) throw new Error(`CONNECT answered ${tunnel.status}: ${tunnel.body}`);
  const secure = tlsConnect({ socket: tunnel.socket, servername, ca });
  return new Promise((resolve, reject) => {
    let text = '';
    let secured = false;
    secure.once('secureConnect', () => {
      secured = true;
      secure.write(`GET /secure HTTP/1.1\r\nhost: ${servername}\r\nconnection: close\r\n\r\n`);
    });
    secure.on('data', (c: Buffer) => {
      text += c.toString();
    });
    secure.once('close', () => (secured ? resolve(text) : reject(new Error('the tunnel closed before TLS was set up'))));
    secure.once('error', reject);
  });
}

describe.skipIf(skip !== null)('the egress proxy, against an upstream in a network namespace', () => {
  let net: TestNetwork;
  let dir: string;
  let loopbackPort: number;
  const loopback = createServer((_req, res) => res.end('host loopback reached\n'));
  const decisions: EgressDecision[] = [];
  const bytes = { sent: 0, received: 0 };
  let listener: EgressListener;
  let socketPath: string;
  /** The same proxy for a sandbox whose containment is `allow`: only the address rules stand. */
  let open: EgressListener;
  let openPath: string;
  const containment: SandboxContainment = {
    network: 'allowlist',
    hosts: ['allowed.test', '*.pkg.test', 'rebind.test', 'mixed.test', 'private.test', 'meta.test'],
  };

  beforeAll(async () => {
    net = await createTestNetwork({ names: ['allowed.test', 'registry.pkg.test'] });
    dir = await mkdtemp(join(tmpdir(), 'egress-proxy-'));
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    loopbackPort = (loopback.address() as AddressInfo).port;
    // Test names: the upstream for the allowed ones, loopback and other private ranges for the rest.
    const names: Record<string, string[]> = {
      'allowed.test': [net.upstreamAddress],
      'registry.pkg.test': [net.upstreamAddress],
      'denied.test': [net.upstreamAddress],
      'rebind.test': ['127.0.0.1'],
      'mixed.test': [net.upstreamAddress, '127.0.0.1'],
      'private.test': ['10.99.0.1'],
      'meta.test': ['169.254.169.254'],
      localhost: ['127.0.0.1', '::1'],
    };
    const proxy = createEgressProxy({
      resolve: async (host) => names[host] ?? [],
      // The test network is private by nature: only its upstream is excepted, per port.
      allowances: async () => privateAllowances([`${net.upstreamAddress}:${net.httpPort}`, `${net.upstreamAddress}:${net.httpsPort}`]),
      onDecision: (_owner, decision) => {
        decisions.push(decision);
      },
      onBytes: (_owner, sent, received) => {
        bytes.sent += sent;
        bytes.received += received;
      },
    });
    socketPath = join(dir, 'sbx.sock');
    listener = await proxy.open('sbx_1', socketPath, containment);
    openPath = join(dir, 'open.sock');
    open = await proxy.open('sbx_open', openPath, { network: 'allow', hosts: [] });
  }, 60_000);

  afterAll(async () => {
    await listener?.close();
    await open?.close();
    await new Promise((resolve) => loopback.close(resolve));
    await net?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('forwards plain HTTP to an allowed host at the address it checked, and a body with it', async () => {
    const got = await getThrough(socketPath, `http://Allowed.Test.:${net.httpPort}/path?q=1`);
    // Decided on the normalised name; the Host header goes on as the client wrote it.
    expect(got).toEqual({ status: 200, body: `upstream http allowed.test.:${net.httpPort} GET /path?q=1 0\n` });
    expect(decisions.at(-1)).toMatchObject({ allowed: true, host: 'allowed.test' });
    const posted = await getThrough(socketPath, `http://registry.pkg.test:${net.httpPort}/up`, 'x'.repeat(1000));
    expect(posted.body).toBe(`upstream http registry.pkg.test:${net.httpPort} POST /up 1000\n`);
    expect(decisions.at(-1)).toEqual({ allowed: true, host: 'registry.pkg.test', port: net.httpPort, method: 'HTTP', reason: 'allowed' });
  });

  it('tunnels TLS to an allowed host with CONNECT, its certificate verified end to end', async () => {
    const answer = await httpsThrough(socketPath, `allowed.test:${net.httpsPort}`, 'allowed.test', net.certificate);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain(`upstream https allowed.test GET /secure 0`);
    expect(decisions.at(-1)).toMatchObject({ allowed: true, method: 'CONNECT', reason: 'allowed' });
  });

  it('refuses a host the allowlist does not name, and the bare apex of a wildcard', async () => {
    const denied = await connectThrough(socketPath, `denied.test:${net.httpsPort}`);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatch(/not_allowlisted/);
    expect((await getThrough(socketPath, `http://pkg.test:${net.httpPort}/`)).status).toBe(403);
    expect(decisions.at(-1)).toMatchObject({ allowed: false, host: 'pkg.test', reason: 'not_allowlisted' });
  });

  it('refuses a ClientHello whose server name is not the CONNECT host', async () => {
    // The name is allowed and resolves to the same upstream: only the SNI differs.
    await expect(httpsThrough(socketPath, `allowed.test:${net.httpsPort}`, 'registry.pkg.test', net.certificate)).rejects.toThrow();
    expect(decisions.at(-1)).toMatchObject({ allowed: false, host: 'allowed.test', reason: 'sni_mismatch' });
  });

  it('never reaches host loopback, whatever the address looks like', async () => {
    for (const target of [
      `127.0.0.1:${loopbackPort}`,
      `localhost.:${loopbackPort}`,
      `0x7f.1:${loopbackPort}`,
      `2130706433:${loopbackPort}`,
      `[::ffff:127.0.0.1]:${loopbackPort}`,
      `[::1]:${loopbackPort}`,
    ]) {
      const answer = await connectThrough(openPath, target);
      expect(answer.status, target).toBe(403);
      expect(answer.body, target).toMatch(/\(loopback\)/);
      const plain = await getThrough(openPath, `http://${target}/`);
      expect(plain.status, target).toBe(403);
    }
  });

  it('refuses a name that resolves to loopback (rebinding), even beside a good address', async () => {
    const rebind = await connectThrough(socketPath, `rebind.test:${loopbackPort}`);
    expect(rebind).toMatchObject({ status: 403 });
    expect(rebind.body).toMatch(/loopback/);
    const mixed = await getThrough(socketPath, `http://mixed.test:${net.httpPort}/`);
    expect(mixed.status).toBe(403);
    expect(decisions.at(-1)).toMatchObject({ host: 'mixed.test', reason: 'loopback' });
  });

  it('refuses other private addresses and the metadata address (only the exact exception passes)', async () => {
    for (const target of [
      '10.1.2.3:80',
      '192.168.0.1:80',
      '172.16.5.5:80',
      '100.64.0.1:80',
      '169.254.169.254:80',
      '[fd00:ec2::254]:80',
      '[fe80::1]:80',
      '0.0.0.0:80',
      '[::]:80',
    ]) {
      expect((await connectThrough(openPath, target)).status, target).toBe(403);
    }
    expect((await connectThrough(socketPath, 'private.test:443')).body).toMatch(/private/);
    expect((await connectThrough(socketPath, 'meta.test:80')).body).toMatch(/metadata/);
    // The upstream itself on a port the exception does not name.
    const otherPort = await connectThrough(socketPath, `allowed.test:22`);
    expect(otherPort.status).toBe(403);
    expect(otherPort.body).toMatch(/private/);
  });

  it('counts the bytes both ways', async () => {
    const before = { ...bytes };
    await getThrough(socketPath, `http://allowed.test:${net.httpPort}/bytes/50000`);
    // Counted when the connection closes; wait for that event rather than a time.
    for (let i = 0; i < 200 && bytes.received - before.received < 50_000; i++) await new Promise((r) => setImmediate(r));
    expect(bytes.received - before.received).toBeGreaterThanOrEqual(50_000);
    expect(bytes.sent - before.sent).toBeGreaterThan(0);
  });
});

describe.skipIf(skip !== null)('the egress proxy of a sandbox whose containment is deny', () => {
  it('refuses everything', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'egress-proxy-'));
    const proxy = createEgressProxy({
      resolve: async () => ['8.8.8.8'],
      allowances: async () => privateAllowances([]),
      onDecision: () => undefined,
      onBytes: () => undefined,
    });
    const listener = await proxy.open('sbx_2', join(dir, 's.sock'), { network: 'deny', hosts: [] });
    try {
      const answer = await connectThrough(join(dir, 's.sock'), 'example.com:443');
      expect(answer.status).toBe(403);
      expect(answer.body).toMatch(/network_denied/);
    } finally {
      await listener.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
