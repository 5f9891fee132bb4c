import type { ExecBody, ExecResultBody } from '@sandcast/contracts';
import { createDockerProvider } from '@sandcast/provider-docker';
import { dockerSkipReason, TEST_IMAGE } from '@sandcast/provider-docker/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { TestServer } from './support/harness.ts';
import { REAL_PROVIDER_DATABASE, requireForSuite, useRealProviderServer } from './support/lifecycle.ts';
import { loopbackLookup, portRequest } from './support/port-client.ts';

const runnable = requireForSuite('ports-docker', await dockerSkipReason());

/**
 * The test image has perl and nothing else to serve with: an HTTP answer per connection, and a
 * raw echo after an upgrade (enough to prove the forwarder relays the upgraded stream both ways).
 */
const PERL_SERVER = String.raw`
use IO::Socket::INET;
my $port = shift;
my $server = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $port, Listen => 16, ReuseAddr => 1) or die "listen: $!";
open(my $ready, ">", "/tmp/ready-$port"); close($ready);
while (my $client = $server->accept()) {
  my $head = "";
  while (my $line = <$client>) { $head .= $line; last if $line eq "\r\n"; }
  if ($head =~ /^Upgrade: websocket/mi) {
    print $client "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
    $client->flush();
    while (sysread($client, my $bytes, 4096)) { syswrite($client, $bytes); }
  } else {
    my ($path) = $head =~ /^GET (\S+)/;
    my $body = "hello from docker port $port: $path\n";
    print $client "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " . length($body) . "\r\nConnection: close\r\n\r\n$body";
  }
  close($client);
}
`;

/** Runs a command in a sandbox or a setup sandbox. */
type Exec = (body: ExecBody) => Promise<ExecResultBody>;

/** Starts the perl server on `port` where `exec` runs, and waits until it listens. */
async function startPerlServer(exec: Exec, port: number): Promise<void> {
  await exec({ command: ['sh', '-c', 'printf %s "$1" > /tmp/server.pl', 'sh', PERL_SERVER] });
  await exec({ command: ['sh', '-c', `nohup perl /tmp/server.pl ${port} >/tmp/server.log 2>&1 &`] });
  const ready = await exec({
    command: ['sh', '-c', `for i in $(seq 200); do [ -f /tmp/ready-${port} ] && exit 0; sleep 0.05; done; cat /tmp/server.log; exit 1`],
  });
  expect(ready.exitCode, ready.stdout + ready.stderr).toBe(0);
}

/** Opens a WebSocket-looking upgrade through a port URL; resolves once the server in the container switched protocols. */
async function openUpgrade(baseUrl: string, cookie: string): Promise<WebSocket> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}ws`, { lookup: loopbackLookup, headers: { cookie } });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('upgrade', () => resolve());
    socket.once('unexpected-response', () => reject(new Error('upgrade refused')));
  });
  return socket;
}

const closedSocket = (socket: WebSocket) => new Promise<void>((resolve) => socket.once('close', () => resolve()));

/** The port calls of one owner, bound to it. */
interface OwnedPorts {
  exec: Exec;
  open(port: number): Promise<{ baseUrl: string }>;
  url(port: number): Promise<{ url: string }>;
  /** What ends access: closing the port, or ending its owner. */
  end(): Promise<unknown>;
}

/**
 * The server in the container answers through the port's URL once its token is traded for a
 * cookie; an upgraded connection is relayed both ways (the perl server echoes raw bytes); `end`
 * closes that connection and every later request is refused.
 */
async function servesThenEnds(ports: OwnedPorts): Promise<string> {
  await startPerlServer(ports.exec, 8080);
  const opened = await ports.open(8080);
  expect((await portRequest(opened.baseUrl)).status).toBe(401);
  const exchanged = await portRequest((await ports.url(8080)).url);
  const cookie = String(exchanged.headers['set-cookie']).split(';')[0]!;
  const hello = await portRequest(`${opened.baseUrl}hi`, { headers: { cookie } });
  expect(hello.status).toBe(200);
  expect(hello.body).toBe('hello from docker port 8080: /hi\n');
  const socket = await openUpgrade(opened.baseUrl, cookie);
  const closed = closedSocket(socket);
  await ports.end();
  await closed;
  expect((await portRequest(opened.baseUrl, { headers: { cookie } })).status).toBe(404);
  return opened.baseUrl;
}

describe.skipIf(!runnable)(`sandbox ports on the Docker provider [${REAL_PROVIDER_DATABASE}]`, () => {
  const { server } = useRealProviderServer((dataDir) => [createDockerProvider({ dataDir })]);
  let t: TestServer;
  let environmentId: string;
  beforeAll(async () => {
    t = server();
    environmentId = (await t.client.environments.create({ name: 'ports-docker', provider: 'docker', config: { image: TEST_IMAGE } })).id;
  });

  it("reaches a server inside a network: none container through the container's own namespace; closing ends access", async () => {
    const sandbox = await t.client.sandboxes.create({ environmentId });
    try {
      await servesThenEnds({
        exec: (body) => t.client.sandboxes.exec(sandbox.id, body),
        open: (port) => t.client.sandboxes.ports.open(sandbox.id, { port }),
        url: (port) => t.client.sandboxes.ports.url(sandbox.id, port),
        end: () => t.client.sandboxes.ports.close(sandbox.id, 8080),
      });
    } finally {
      await t.client.sandboxes.delete(sandbox.id).catch(() => undefined);
    }
  }, 120_000);

  it('reaches a server inside a setup container through its URL; cancelling the setup ends access at once', async () => {
    const { session } = await t.client.customImages.startSetup(environmentId);
    try {
      const baseUrl = await servesThenEnds({
        exec: (body) => t.client.customImages.exec(session.id, body),
        open: (port) => t.client.customImages.ports.open(session.id, { port }),
        url: (port) => t.client.customImages.ports.url(session.id, port),
        end: () => t.client.customImages.cancel(session.id),
      });
      expect(new URL(baseUrl).hostname).toMatch(/^8080-setup-[0-9a-f]{32}\./);
    } finally {
      await t.client.customImages.cancel(session.id).catch(() => undefined);
    }
  }, 120_000);
});
