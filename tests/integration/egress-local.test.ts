import type { ExecResultBody } from '@sandcast/contracts';
import { createLocalProvider } from '@sandcast/provider-local';
import { localSkipReason } from '@sandcast/provider-local/testing';
import { testNetworkSkipReason } from '@sandcast/server/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALLOWLIST, apiPortOf, POSTGRES_PORT, useEgressServer } from './support/egress-fixture.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite } from './support/lifecycle.ts';

const runnable = requireForSuite('egress-local', (await localSkipReason()) ?? (await testNetworkSkipReason()));

/** curl's exit code and what it printed (`-w` output last). */
const out = (r: ExecResultBody) => `${r.stdout}${r.stderr}`;

describe.skipIf(!runnable)(`egress from local sandboxes through the proxy [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server, net, advanceClock } = useEgressServer((dataDir) => [createLocalProvider({ dataDir })]);
  const ids: Record<'allowlist' | 'allow' | 'deny', string> = { allowlist: '', allow: '', deny: '' };
  const curl = (sandboxId: string, args: string[]) =>
    server().client.sandboxes.exec(sandboxId, { command: ['curl', '-sS', '--max-time', '20', ...args], timeoutMs: 60_000 });

  beforeAll(async () => {
    const t = server();
    const make = async (name: keyof typeof ids, containment: { network: 'deny' | 'allowlist' | 'allow'; hosts: string[] }) => {
      const env = await t.client.environments.create({
        name: `egress-local-${name}`,
        provider: 'local',
        config: {},
        spec: { containment },
      });
      ids[name] = (await t.client.sandboxes.create({ environmentId: env.id })).id;
      expect((await t.client.sandboxes.get(ids[name])).status).toBe('running');
    };
    await make('allowlist', { network: 'allowlist', hosts: ALLOWLIST });
    await make('allow', { network: 'allow', hosts: [] });
    await make('deny', { network: 'deny', hosts: [] });
    for (const id of [ids.allowlist, ids.allow]) {
      await t.client.sandboxes.exec(id, { command: ['sh', '-c', 'printf %s "$1" > /tmp/ca.pem', 'sh', net().certificate] });
    }
  }, 180_000);

  it('sets the proxy variables and reaches an allowed host over HTTP and HTTPS (CONNECT)', async () => {
    const env = await server().client.sandboxes.exec(ids.allowlist, { command: ['sh', '-c', 'env | grep -i _proxy= | sort'] });
    expect(env.stdout).toContain('HTTPS_PROXY=http://127.0.0.1:3128');
    expect(env.stdout).toContain('http_proxy=http://127.0.0.1:3128');
    expect(env.stdout).toContain('NO_PROXY=localhost,127.0.0.1,::1');
    const plain = await curl(ids.allowlist, [`http://allowed.test:${net().httpPort}/hello`]);
    expect(out(plain)).toBe(`upstream http allowed.test:${net().httpPort} GET /hello 0\n`);
    const secure = await curl(ids.allowlist, ['--cacert', '/tmp/ca.pem', `https://allowed.test:${net().httpsPort}/secure`]);
    expect(out(secure)).toBe(`upstream https allowed.test:${net().httpsPort} GET /secure 0\n`);
  }, 60_000);

  it('refuses a host the allowlist does not name, with 403 from the proxy', async () => {
    const plain = await curl(ids.allowlist, ['-o', '/dev/null', '-w', '%{http_code}', `http://denied.test:${net().httpPort}/`]);
    expect(plain.stdout).toBe('403');
    const tunnel = await curl(ids.allowlist, ['-w', '%{http_connect}', `https://denied.test:${net().httpsPort}/`]);
    expect(tunnel.exitCode).not.toBe(0);
    expect(tunnel.stdout).toBe('403');
  }, 60_000);

  it('never reaches host loopback: the Sandcast API, Postgres, nor a name that resolves to 127.0.0.1', async () => {
    const apiPort = apiPortOf(server());
    for (const target of [`http://127.0.0.1:${apiPort}/api/health`, `http://[::1]:${apiPort}/`, `http://0x7f.1:${POSTGRES_PORT}/`]) {
      // `--noproxy ''` overrides NO_PROXY: ask the proxy for it, which must say no.
      const viaProxy = await curl(ids.allow, ['--noproxy', '', '-o', '/dev/null', '-w', '%{http_code}', target]);
      expect(viaProxy.stdout, target).toBe('403');
    }
    const tunnel = await curl(ids.allow, ['-p', '--noproxy', '', '-w', '%{http_connect}', `http://127.0.0.1:${POSTGRES_PORT}/`]);
    expect(tunnel.stdout).toBe('403');
    // Straight to the port, without the proxy: the sandbox's own loopback, where nothing listens.
    const direct = await curl(ids.allow, ['--noproxy', '*', `http://127.0.0.1:${apiPort}/api/health`]);
    expect(direct.exitCode).toBe(7);
    const rebind = await curl(ids.allowlist, ['-o', '/dev/null', '-w', '%{http_code}', `http://rebind.test:${apiPort}/api/health`]);
    expect(rebind.stdout).toBe('403');
  }, 90_000);

  it('refuses the metadata address and other private addresses', async () => {
    for (const target of [
      'http://169.254.169.254/latest/meta-data/',
      'http://meta.test/',
      'http://private.test/',
      'http://[fd00:ec2::254]/',
    ]) {
      const answer = await curl(ids.allow, ['-o', '/dev/null', '-w', '%{http_code}', target]);
      expect(answer.stdout, target).toBe('403');
    }
    const allowlisted = await curl(ids.allowlist, ['-o', '/dev/null', '-w', '%{http_code}', 'http://meta.test/']);
    expect(allowlisted.stdout).toBe('403');
  }, 60_000);

  it('refuses a tunnel whose TLS server name is not the host it asked for', async () => {
    // CONNECT allowed.test, then a ClientHello for sni.test (allowed, same address, other name).
    const fronted = await curl(ids.allowlist, [
      '--cacert',
      '/tmp/ca.pem',
      '--connect-to',
      `sni.test:${net().httpsPort}:allowed.test:${net().httpsPort}`,
      `https://sni.test:${net().httpsPort}/`,
    ]);
    expect(fronted.exitCode, out(fronted)).not.toBe(0);
    const activity = await server().client.activity({ action: 'sandbox.egress.denied', limit: 500 });
    expect(activity.some((a) => a.subjectId === ids.allowlist && a.details.reason === 'sni_mismatch')).toBe(true);
  }, 60_000);

  it('gives a deny sandbox no proxy and no route out', async () => {
    const env = await server().client.sandboxes.exec(ids.deny, { command: ['sh', '-c', 'env | grep -ci _proxy= || true'] });
    expect(env.stdout.trim()).toBe('0');
    const proxy = await curl(ids.deny, ['-x', 'http://127.0.0.1:3128', `http://allowed.test:${net().httpPort}/`]);
    expect(proxy.exitCode).toBe(7);
    const direct = await curl(ids.deny, [`http://${net().upstreamAddress}:${net().httpPort}/`]);
    expect(direct.exitCode).toBe(7);
    // Nor does an allowlist sandbox have a route around its proxy.
    const around = await curl(ids.allowlist, ['--noproxy', '*', `http://${net().upstreamAddress}:${net().httpPort}/`]);
    expect(around.exitCode).toBe(7);
  }, 60_000);

  it('counts the bytes both ways on the sandbox and in /metrics, and records decisions without paths', async () => {
    const t = server();
    const before = (await t.client.sandboxes.get(ids.allowlist)).egress ?? { sentBytes: 0, receivedBytes: 0 };
    const got = await curl(ids.allowlist, [
      '-o',
      '/dev/null',
      '-w',
      '%{size_download}',
      `http://allowed.test:${net().httpPort}/bytes/200000`,
    ]);
    expect(got.stdout).toBe('200000');
    const after = (await t.client.sandboxes.get(ids.allowlist)).egress!;
    expect(after.receivedBytes - before.receivedBytes).toBeGreaterThanOrEqual(200_000);
    expect(after.sentBytes).toBeGreaterThan(before.sentBytes);
    expect((await t.client.sandboxes.get(ids.deny)).egress).toBeNull();
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/sandcast_egress_bytes_total\{direction="in"\} \d+/);
    expect(metrics).toMatch(/sandcast_egress_decisions_total\{decision="denied",reason="not_allowlisted"\} \d+/);
    expect(metrics).not.toContain('denied.test');
    const denied = await t.client.activity({ action: 'sandbox.egress.denied', limit: 500 });
    const entry = denied.find((a) => a.subjectId === ids.allowlist && a.details.host === 'denied.test' && a.details.method === 'HTTP');
    expect(entry?.details).toEqual({ host: 'denied.test', port: net().httpPort, method: 'HTTP', reason: 'not_allowlisted' });
    expect(JSON.stringify(denied)).not.toContain('/bytes/');
  }, 60_000);

  it('records at most 20 decisions a minute per sandbox, and then how many it left out', async () => {
    const t = server();
    const env = (await t.client.environments.list()).find((e) => e.name === 'egress-local-allowlist')!;
    const flooder = await t.client.sandboxes.create({ environmentId: env.id });
    const flood = `for i in $(seq 50); do curl -s -o /dev/null http://denied.test:${net().httpPort}/$i; done`;
    expect((await t.client.sandboxes.exec(flooder.id, { command: ['sh', '-c', flood], timeoutMs: 120_000 })).exitCode).toBe(0);
    const mine = async (action: string) => (await t.client.activity({ action, limit: 500 })).filter((a) => a.subjectId === flooder.id);
    expect(await mine('sandbox.egress.denied')).toHaveLength(20);
    advanceClock(61_000);
    await curl(flooder.id, ['-o', '/dev/null', `http://denied.test:${net().httpPort}/after`]);
    // Recorded before the proxy answered the request that opened the next window.
    const summary = await mine('sandbox.egress.suppressed');
    expect(summary.map((a) => a.details)).toEqual([{ decisions: 30, windowSeconds: 60 }]);
    await t.client.sandboxes.delete(flooder.id);
  }, 120_000);

  it("gives a setup session its environment's policy: the proxy with allow, nothing with deny", async () => {
    const t = server();
    const envs = await t.client.environments.list();
    const allow = envs.find((e) => e.name === 'egress-local-allow')!;
    const { session } = await t.client.customImages.startSetup(allow.id);
    try {
      const got = await t.client.customImages.exec(session.id, {
        command: ['curl', '-sS', '--max-time', '20', `http://allowed.test:${net().httpPort}/setup`],
      });
      expect(got.stdout).toBe(`upstream http allowed.test:${net().httpPort} GET /setup 0\n`);
    } finally {
      await t.client.customImages.cancel(session.id);
    }
    const deny = envs.find((e) => e.name === 'egress-local-deny')!;
    const denied = await t.client.customImages.startSetup(deny.id);
    try {
      const env = await t.client.customImages.exec(denied.session.id, { command: ['sh', '-c', 'env | grep -ci _proxy= || true'] });
      expect(env.stdout.trim()).toBe('0');
    } finally {
      await t.client.customImages.cancel(denied.session.id);
    }
  }, 120_000);

  it('relays at most 256 connections at once: a sandbox cannot fill the host with relay processes', async () => {
    // 300 tunnels held open at once: each either gets the proxy's 200 or is closed unanswered.
    const script = `
      const net = require('node:net');
      const outcomes = Array.from({ length: 300 }, () => new Promise((resolve) => {
        const s = net.connect(3128, '127.0.0.1', () => s.write('CONNECT allowed.test:${net().httpPort} HTTP/1.1\\r\\nhost: allowed.test\\r\\n\\r\\n'));
        s.once('data', (d) => resolve(String(d).startsWith('HTTP/1.1 200') ? 'relayed' : 'other'));
        s.once('close', () => resolve('refused'));
        s.once('error', () => resolve('refused'));
      }));
      Promise.all(outcomes).then((all) => {
        const count = (k) => all.filter((o) => o === k).length;
        console.log(JSON.stringify({ relayed: count('relayed'), refused: count('refused'), other: count('other') }));
        process.exit(0);
      });`;
    const ran = await server().client.sandboxes.exec(ids.allow, { command: ['node', '-e', script], timeoutMs: 120_000 });
    expect(JSON.parse(ran.stdout), ran.stderr).toEqual({ relayed: 256, refused: 44, other: 0 });
    // Once they are gone, new connections are relayed again.
    const again = await curl(ids.allow, [`http://allowed.test:${net().httpPort}/after-flood`]);
    expect(out(again)).toBe(`upstream http allowed.test:${net().httpPort} GET /after-flood 0\n`);
  }, 120_000);

  it('is attached again after a restart: by the reconciler for sandboxes, by recovery for setup sessions', async () => {
    const t = server();
    const url = `http://allowed.test:${net().httpPort}/back`;
    const record = await t.server.store.repos.sandboxes.get(ids.allow);
    // What a restart loses: the proxy's listener and the relay (they live in the server).
    await t.server.services.egress.detach(record!.providerInstanceId!);
    expect((await curl(ids.allow, ['-x', 'http://127.0.0.1:3128', url])).exitCode).toBe(7);
    await t.server.reconciler.runOnce();
    expect(out(await curl(ids.allow, [url]))).toBe(`upstream http allowed.test:${net().httpPort} GET /back 0\n`);

    const allow = (await t.client.environments.list()).find((e) => e.name === 'egress-local-allow')!;
    const { session } = await t.client.customImages.startSetup(allow.id);
    try {
      const lease = (await t.server.store.repos.setupSessions.get(session.id))!.providerLeaseId!;
      await t.server.services.egress.detach(lease);
      await t.server.services.setupSessions.recoverAfterRestart();
      const got = await t.client.customImages.exec(session.id, { command: ['curl', '-sS', '--max-time', '20', url] });
      expect(got.stdout).toBe(`upstream http allowed.test:${net().httpPort} GET /back 0\n`);
    } finally {
      await t.client.customImages.cancel(session.id);
    }
  }, 120_000);

  it('follows the sandbox through stop and start, and goes with it', async () => {
    const t = server();
    await t.client.sandboxes.stop(ids.allowlist);
    await t.client.sandboxes.start(ids.allowlist);
    const again = await curl(ids.allowlist, [`http://allowed.test:${net().httpPort}/again`]);
    expect(out(again)).toBe(`upstream http allowed.test:${net().httpPort} GET /again 0\n`);
    await t.client.sandboxes.delete(ids.allowlist);
  }, 120_000);
});
