import { createDockerProvider } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import { testNetworkSkipReason } from '@sandcast/server/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALLOWLIST, apiPortOf, clientHelloFor, POSTGRES_PORT, useEgressServer } from './support/egress-fixture.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite } from './support/lifecycle.ts';

const runnable = requireForSuite('egress-docker', (await dockerSkipReason()) ?? (await testNetworkSkipReason()));

/**
 * The test image has perl and no HTTP client: this one talks to the proxy named by HTTP_PROXY.
 * `get <url>` prints the answer; `tunnel <host:port> <hex>` sends CONNECT, prints the status
 * line, then sends the bytes (a ClientHello) and prints the first answer bytes in hex;
 * `direct <ip> <port>` connects without the proxy and says how it went.
 */
const CLIENT = String.raw`
use IO::Socket::INET;
my ($mode, $target, $arg) = @ARGV;
if ($mode eq 'direct') {
  my $s = IO::Socket::INET->new(PeerAddr => $target, PeerPort => $arg, Timeout => 5);
  print $s ? "connected\n" : "failed: $!\n"; exit 0;
}
my ($ph, $pp) = ($ENV{HTTP_PROXY} // '') =~ m{^http://([^:/]+):(\d+)} or do { print "no HTTP_PROXY\n"; exit 3 };
my $s = IO::Socket::INET->new(PeerAddr => $ph, PeerPort => $pp) or do { print "proxy refused: $!\n"; exit 4 };
if ($mode eq 'get') {
  my ($host) = $target =~ m{^http://([^/]+)};
  print $s "GET $target HTTP/1.1\r\nHost: $host\r\nConnection: close\r\n\r\n";
  print while <$s>;
} else {
  print $s "CONNECT $target HTTP/1.1\r\nHost: $target\r\n\r\n";
  my $status = <$s>; print $status;
  while (my $line = <$s>) { last if $line eq "\r\n"; }
  exit 0 unless $status =~ / 200 /;
  syswrite($s, pack('H*', $arg));
  my $n = sysread($s, my $buf, 5);
  print "first:", unpack('H*', $buf // ''), "\n";
}
`;

describe.skipIf(!runnable)(`egress from Docker sandboxes through the proxy [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server, net } = useEgressServer((dataDir) => [createDockerProvider({ dataDir })]);
  const ids: Record<'allowlist' | 'allow' | 'deny', string> = { allowlist: '', allow: '', deny: '' };
  const client = async (sandboxId: string, args: string[]) => {
    const result = await server().client.sandboxes.exec(sandboxId, { command: ['perl', '/tmp/client.pl', ...args], timeoutMs: 60_000 });
    return `${result.stdout}${result.stderr}`;
  };
  const status = async (sandboxId: string, url: string) => (await client(sandboxId, ['get', url])).split('\r\n')[0];

  beforeAll(async () => {
    const t = server();
    const make = async (name: keyof typeof ids, containment: { network: 'deny' | 'allowlist' | 'allow'; hosts: string[] }) => {
      const env = await t.client.environments.create({
        name: `egress-docker-${name}`,
        provider: 'docker',
        config: { image: TEST_IMAGE },
        spec: { containment },
      });
      ids[name] = (await t.client.sandboxes.create({ environmentId: env.id })).id;
      await t.client.sandboxes.exec(ids[name], { command: ['sh', '-c', 'printf %s "$1" > /tmp/client.pl', 'sh', CLIENT] });
    };
    await make('allowlist', { network: 'allowlist', hosts: ALLOWLIST });
    await make('allow', { network: 'allow', hosts: [] });
    await make('deny', { network: 'deny', hosts: [] });
  }, 240_000);

  it('reaches an allowed host over HTTP, and tunnels TLS to it with CONNECT', async () => {
    const answer = await client(ids.allowlist, ['get', `http://allowed.test:${net().httpPort}/docker`]);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain(`upstream http allowed.test:${net().httpPort} GET /docker 0`);
    const tunnel = await client(ids.allowlist, [
      'tunnel',
      `allowed.test:${net().httpsPort}`,
      (await clientHelloFor('allowed.test')).toString('hex'),
    ]);
    // The upstream's TLS server answered the ClientHello with a handshake record (0x16, TLS 1.x).
    expect(tunnel).toMatch(/^HTTP\/1\.1 200 .*\r\nfirst:1603/);
  }, 60_000);

  it('refuses a denied host, host loopback, Postgres, the metadata address and a rebinding name', async () => {
    const apiPort = apiPortOf(server());
    expect(await status(ids.allowlist, `http://denied.test:${net().httpPort}/`)).toBe('HTTP/1.1 403 Forbidden');
    expect(await status(ids.allow, `http://127.0.0.1:${apiPort}/api/health`)).toBe('HTTP/1.1 403 Forbidden');
    expect(await status(ids.allow, `http://[::ffff:127.0.0.1]:${apiPort}/`)).toBe('HTTP/1.1 403 Forbidden');
    expect(await client(ids.allow, ['tunnel', `127.0.0.1:${POSTGRES_PORT}`, ''])).toMatch(/^HTTP\/1\.1 403/);
    expect(await status(ids.allow, 'http://169.254.169.254/latest/meta-data/')).toBe('HTTP/1.1 403 Forbidden');
    expect(await status(ids.allowlist, `http://rebind.test:${apiPort}/`)).toBe('HTTP/1.1 403 Forbidden');
    expect(await status(ids.allow, 'http://private.test/')).toBe('HTTP/1.1 403 Forbidden');
  }, 60_000);

  it('cuts a tunnel whose ClientHello names another host', async () => {
    const hello = (await clientHelloFor('sni.test')).toString('hex');
    const tunnel = await client(ids.allowlist, ['tunnel', `allowed.test:${net().httpsPort}`, hello]);
    expect(tunnel).toMatch(/^HTTP\/1\.1 200 .*\r\nfirst:\n$/);
    const activity = await server().client.activity({ action: 'sandbox.egress.denied', limit: 500 });
    expect(activity.some((a) => a.subjectId === ids.allowlist && a.details.reason === 'sni_mismatch')).toBe(true);
  }, 60_000);

  it('gives a deny sandbox no proxy and no route out, and an allowlist sandbox none around its proxy', async () => {
    expect(await client(ids.deny, ['get', 'http://allowed.test/'])).toBe('no HTTP_PROXY\n');
    expect(await client(ids.deny, ['direct', '127.0.0.1', '3128'])).toMatch(/^failed: Connection refused/);
    expect(await client(ids.deny, ['direct', net().upstreamAddress, String(net().httpPort)])).toMatch(/^failed: Network is unreachable/);
    expect(await client(ids.allowlist, ['direct', net().upstreamAddress, String(net().httpPort)])).toMatch(
      /^failed: Network is unreachable/,
    );
  }, 60_000);

  it('counts the bytes on the sandbox view', async () => {
    const before = (await server().client.sandboxes.get(ids.allow)).egress ?? { sentBytes: 0, receivedBytes: 0 };
    const answer = await client(ids.allow, ['get', `http://allowed.test:${net().httpPort}/bytes/100000`]);
    expect(answer.length).toBeGreaterThan(100_000);
    const after = (await server().client.sandboxes.get(ids.allow)).egress!;
    expect(after.receivedBytes - before.receivedBytes).toBeGreaterThanOrEqual(100_000);
    expect(after.sentBytes).toBeGreaterThan(before.sentBytes);
  }, 60_000);

  it('follows the container through stop and start', async () => {
    await server().client.sandboxes.stop(ids.allowlist);
    await server().client.sandboxes.start(ids.allowlist);
    expect(await status(ids.allowlist, `http://allowed.test:${net().httpPort}/`)).toBe('HTTP/1.1 200 OK');
    for (const id of Object.values(ids)) await server().client.sandboxes.delete(id);
  }, 120_000);
});
