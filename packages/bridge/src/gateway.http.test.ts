import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { checkRequestObject, createFrameDecoder, encodeFrame } from './codec.ts';
import type { RequestFrame } from './frames.ts';
import { duplexGatewayCommand, queueGatewayCommand } from './gateway.ts';
import { freePort, gatewayForTests, rawHttp, startGateway } from './gateway-test-support.ts';

/*
 * The gateway's HTTP side and both transports, run on the host (the program needs nothing from a
 * sandbox). The host end here is the test itself, speaking the frames through the TypeScript codec.
 */

const run = promisify(execFile);
const NONCE = '0123456789abcdef0123456789abcdef';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function duplex(extra: Record<string, number> = {}) {
  const port = await freePort();
  const [, ...args] = duplexGatewayCommand({ port, nonce: NONCE, binary: 'x', ...extra });
  const gateway = startGateway(args);
  cleanups.push(() => {
    gateway.child.kill('SIGKILL');
  });
  expect(await gateway.nextLine()).toBe(`{"version":1,"type":"ready","nonce":"${NONCE}"}`);
  const decoder = createFrameDecoder();
  /** The next request frame the gateway sent, read with the TypeScript codec. */
  const nextRequest = async (): Promise<RequestFrame> => {
    for (;;) {
      const [result] = decoder.push(Buffer.from(`${await gateway.nextLine()}\n`));
      if (result && 'frame' in result && result.frame.type === 'request') return result.frame;
      if (result && 'error' in result) throw new Error(`the gateway sent a frame the codec refuses: ${result.error}`);
    }
  };
  const answer = (id: string, status: number, body: string, headers: Record<string, string> = {}) =>
    gateway.child.stdin.write(
      encodeFrame({ version: 1, type: 'response', id, status, headers, body: Buffer.from(body).toString('base64') }),
    );
  return { port, gateway, nextRequest, answer };
}

const statusOf = (raw: string) => Number(raw.slice(9, 12));

describe('duplex mode', () => {
  it('carries a request out as a frame and the response frame back as HTTP', async () => {
    const { port, nextRequest, answer } = await duplex();
    const pending = fetch(`http://127.0.0.1:${port}/api/sessions/s1/exec?x=1`, {
      method: 'POST',
      headers: { authorization: 'Bearer t0k', 'content-type': 'application/json', 'X-Mixed': 'a' },
      body: '{"command":["ls"]}',
    });
    const request = await nextRequest();
    expect(request).toMatchObject({ method: 'POST', path: '/api/sessions/s1/exec?x=1' });
    expect(request.headers).toMatchObject({ authorization: 'Bearer t0k', 'content-type': 'application/json', 'x-mixed': 'a' });
    expect(Buffer.from(request.body, 'base64').toString()).toBe('{"command":["ls"]}');
    answer(request.id, 201, '{"ok":true}', { 'content-type': 'application/json', 'x-answer': 'yes' });
    const response = await pending;
    expect(response.status).toBe(201);
    expect(response.headers.get('x-answer')).toBe('yes');
    expect(await response.json()).toEqual({ ok: true });
  });

  it('gives each request its own id and answers each connection with its own response', async () => {
    const { port, nextRequest, answer } = await duplex();
    const calls = [0, 1, 2, 3, 4].map((n) => fetch(`http://127.0.0.1:${port}/n/${n}`).then((r) => r.text()));
    const requests = await Promise.all(calls.map(() => nextRequest()));
    expect(new Set(requests.map((r) => r.id)).size).toBe(5);
    for (const request of requests.reverse()) answer(request.id, 200, request.path);
    expect(await Promise.all(calls)).toEqual(['/n/0', '/n/1', '/n/2', '/n/3', '/n/4']);
  });

  it('refuses chunked bodies, oversized bodies and heads, and garbage, and keeps serving', async () => {
    const { port, nextRequest, answer } = await duplex({ maxBodyBytes: 1000 });
    expect(statusOf(await rawHttp(port, 'POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'))).toBe(400);
    expect(statusOf(await rawHttp(port, `POST /x HTTP/1.1\r\nContent-Length: 1001\r\n\r\n${'a'.repeat(1001)}`))).toBe(413);
    expect(statusOf(await rawHttp(port, `GET /x HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))).toBe(400);
    expect(statusOf(await rawHttp(port, 'GET /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab'))).toBe(400);
    expect(statusOf(await rawHttp(port, 'get /x HTTP/1.1\r\n\r\n'))).toBe(400);
    expect(statusOf(await rawHttp(port, '\x00\x01\x02 garbage\r\n\r\n'))).toBe(400);
    const body = await rawHttp(port, 'POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n');
    expect(JSON.parse(body.slice(body.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'bad_request' } });
    const pending = fetch(`http://127.0.0.1:${port}/still`);
    const request = await nextRequest();
    answer(request.id, 200, 'alive');
    expect(await (await pending).text()).toBe('alive');
  });

  it('answers 503 beyond its connection limit', async () => {
    const { port, nextRequest, answer } = await duplex({ maxConnections: 2 });
    const held = [fetch(`http://127.0.0.1:${port}/a`), fetch(`http://127.0.0.1:${port}/b`)];
    const requests = [await nextRequest(), await nextRequest()];
    expect(statusOf(await rawHttp(port, 'GET /c HTTP/1.1\r\n\r\n'))).toBe(503);
    for (const r of requests) answer(r.id, 204, '');
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([204, 204]);
  });

  it('drops frames it cannot read, and a response for an unknown id, without crashing', async () => {
    const { port, gateway, nextRequest, answer } = await duplex();
    const pending = fetch(`http://127.0.0.1:${port}/x`);
    const request = await nextRequest();
    gateway.child.stdin.write('not json\n{"version":1,"type":"response"}\n\xff\xfe\n');
    answer('someone-else', 200, 'wrong');
    answer(request.id, 200, 'right');
    answer(request.id, 500, 'twice');
    expect(await (await pending).text()).toBe('right');
  });

  it('when the host goes away: an unsafe request in flight answers 504 indeterminate, a safe one 502', async () => {
    const { port, gateway, nextRequest } = await duplex();
    const unsafe = fetch(`http://127.0.0.1:${port}/post`, { method: 'POST', body: 'x' });
    const safe = fetch(`http://127.0.0.1:${port}/get`);
    await nextRequest();
    await nextRequest();
    gateway.child.stdin.end();
    const [u, s] = await Promise.all([unsafe, safe]);
    expect(u.status).toBe(504);
    expect(await u.json()).toMatchObject({ error: { code: 'indeterminate' } });
    expect(s.status).toBe(502);
    const [code] = await new Promise<[number | null]>((resolve) => gateway.child.once('exit', (c) => resolve([c])));
    expect(code).toBe(4);
  });

  it('treats three heartbeat intervals of silence as a lost channel and sends its own heartbeats', async () => {
    const { gateway } = await duplex({ heartbeatMs: 50 });
    expect(await gateway.nextLine()).toBe('{"version":1,"type":"heartbeat"}');
    const [code] = await new Promise<[number | null]>((resolve) => gateway.child.once('exit', (c) => resolve([c])));
    expect(code).toBe(4);
  });

  it('reports bind_failed and exits 3 when the port is taken', async () => {
    const { port } = await duplex();
    const second = startGateway(duplexGatewayCommand({ port, nonce: NONCE, binary: 'x' }).slice(1));
    expect(await second.nextLine()).toBe('{"version":1,"type":"error","code":"bind_failed"}');
    expect(await new Promise((resolve) => second.child.once('exit', resolve))).toBe(3);
  });

  it('survives random bytes on its HTTP side and on its frame side', async () => {
    const { port, gateway, nextRequest, answer } = await duplex();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2000 }), fc.uint8Array({ maxLength: 500 }), async (http, frames) => {
        gateway.child.stdin.write(frames);
        gateway.child.stdin.write('\n');
        const raw = await rawHttp(port, Buffer.from(http));
        // Nothing complete was sent: either no answer (the connection was dropped) or a 4xx.
        if (raw !== '') expect(statusOf(raw)).toBeGreaterThanOrEqual(400);
      }),
      { numRuns: 200 },
    );
    const pending = fetch(`http://127.0.0.1:${port}/after-fuzz`);
    let request = await nextRequest();
    while (request.path !== '/after-fuzz') request = await nextRequest();
    answer(request.id, 200, 'ok');
    expect(await (await pending).text()).toBe('ok');
    expect(gateway.child.exitCode).toBeNull();
  });
});

describe('queue mode', () => {
  async function queue(extra: Record<string, number> = {}) {
    const spool = await mkdtemp(join(tmpdir(), 'sandcast-spool-'));
    const port = await freePort();
    const [, ...args] = queueGatewayCommand({ port, spool, binary: 'x', ...extra });
    await run(gatewayForTests(), args);
    cleanups.push(async () => {
      await run('/bin/sh', ['-c', `kill "$(cat ${spool}/gateway.pid)"`]).catch(() => undefined);
      await rm(spool, { recursive: true, force: true });
    });
    const gw = async (...command: string[]) => (await run(gatewayForTests(), command)).stdout;
    /** One blocking wait: the ids it claimed, each read back from work/ with the codec's rules. */
    const waitOnce = async (waitMs = 5000) => {
      const ids = (await gw('wait', '--spool', spool, '--max', '8', '--wait-ms', String(waitMs))).split('\n').filter(Boolean);
      return Promise.all(ids.map(async (id) => checkRequestObject(JSON.parse(await readFile(join(spool, 'work', `${id}.json`), 'utf8')))));
    };
    const respond = async (id: string, status: number, body: string) => {
      const response = { id, status, headers: { 'x-q': '1' }, body: Buffer.from(body).toString('base64') };
      await writeFile(join(spool, 'res', `.${id}.tmp`), JSON.stringify(response));
      await gw('commit', '--spool', spool, '--', id);
    };
    return { port, spool, waitOnce, respond };
  }

  it('spools a request, the blocking wait claims it, the committed answer reaches the caller', async () => {
    const { port, spool, waitOnce, respond } = await queue();
    const pending = fetch(`http://127.0.0.1:${port}/api/x`, { method: 'PUT', body: 'data' });
    const [claimed] = await waitOnce();
    if (!claimed || !('request' in claimed)) throw new Error(`no request claimed: ${JSON.stringify(claimed)}`);
    expect(claimed.request).toMatchObject({ method: 'PUT', path: '/api/x', body: Buffer.from('data').toString('base64') });
    await respond(claimed.request.id, 202, 'done');
    const answered = await pending;
    expect(answered.status).toBe(202);
    expect(answered.headers.get('x-q')).toBe('1');
    expect(await answered.text()).toBe('done');
    expect(await readdir(join(spool, 'res'))).toEqual([]);
    expect(await readdir(join(spool, 'work'))).toEqual([]);
    // Claimed once: a second wait finds nothing and returns when it expires.
    expect(await waitOnce(50)).toEqual([]);
  });

  it('removes planted spool files that are no request, and answers 503 when the queue is full', async () => {
    const { port, spool, waitOnce } = await queue({ maxDepth: 1 });
    await writeFile(join(spool, 'req', 'evil.json'), '{"id":"other","method":"GET","path":"/x","headers":{},"body":""}');
    await writeFile(join(spool, 'req', 'junk.json'), Buffer.from([0xff, 0x00, 0x0a]));
    const first = fetch(`http://127.0.0.1:${port}/one`);
    let claimed = await waitOnce();
    while (claimed.length === 0) claimed = await waitOnce();
    expect(claimed).toHaveLength(1);
    expect(claimed[0]).toMatchObject({ request: { path: '/one' } });
    expect((await fetch(`http://127.0.0.1:${port}/two`)).status).toBe(503);
    expect(await readdir(join(spool, 'req'))).toEqual([]);
    void first.catch(() => undefined);
  });
});
