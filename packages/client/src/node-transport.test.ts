import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SandcastClient } from './client.ts';
import { SandcastApiError, SandcastConnectionError } from './errors.ts';
import { createNodeTransport } from './node-transport.ts';

const Anything = z.looseObject({});

describe('the Node transport', () => {
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string; socket: unknown }[] = [];
  let answer: (response: http.ServerResponse) => void = () => undefined;
  let server: http.Server;
  let baseUrl: string;
  const transport = createNodeTransport();

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        seen.push({ method: request.method!, url: request.url!, headers: request.headers, body, socket: request.socket });
        answer(response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    transport.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const json = (status: number, value: unknown) => (response: http.ServerResponse) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(value));
  };

  it('sends the same request as fetch, and keeps one connection for the next', async () => {
    const client = new SandcastClient({ baseUrl, apiKey: 'sc_key', transport });
    answer = json(200, { exitCode: 0, stdout: 'hé', stderr: '', durationMs: 1, truncated: false, timedOut: false });
    seen.length = 0;
    const out = await client.request('POST', '/api/sandboxes/sbx_1/exec', Anything, {
      body: { command: ['echo', 'hé'] },
    });
    expect(out).toMatchObject({ stdout: 'hé' });
    await client.request('GET', '/api/x', Anything, { query: { a: 'b c' } });
    expect(seen.map((r) => [r.method, r.url])).toEqual([
      ['POST', '/api/sandboxes/sbx_1/exec'],
      ['GET', '/api/x?a=b+c'],
    ]);
    expect(seen[0]!.headers).toMatchObject({
      authorization: 'Bearer sc_key',
      'content-type': 'application/json',
      accept: 'application/json',
    });
    expect(JSON.parse(seen[0]!.body)).toEqual({ command: ['echo', 'hé'] });
    expect(seen[0]!.headers['content-length']).toBe(String(Buffer.byteLength(seen[0]!.body)));
    expect(seen[1]!.socket).toBe(seen[0]!.socket);
  });

  it('an error answer is a SandcastApiError with its code, as with fetch', async () => {
    answer = json(409, { error: { code: 'conflict', message: 'sandbox sbx_1 is stopped', details: { status: 'stopped' } } });
    const client = new SandcastClient({ baseUrl, transport });
    const error = await client.request('GET', '/api/x', Anything).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandcastApiError);
    expect(error).toMatchObject({ status: 409, code: 'conflict' });
  });

  it('a server that cannot be reached, a non-HTTP URL and an oversized answer are connection errors, not crashes', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = new SandcastClient({ baseUrl: `http://127.0.0.1:${port}`, transport });
    await expect(unreachable.request('GET', '/api/x', Anything)).rejects.toBeInstanceOf(SandcastConnectionError);

    await expect(transport({ method: 'GET', url: 'ftp://127.0.0.1/x', headers: {}, body: undefined })).rejects.toThrow(/http and https/);

    answer = (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const more = () => {
        while (sent < 70 && response.write(chunk)) sent++;
        if (sent < 70) response.once('drain', more);
        else response.end();
      };
      response.on('error', () => undefined);
      more();
    };
    const client = new SandcastClient({ baseUrl, transport });
    await expect(client.request('GET', '/api/x', Anything)).rejects.toThrow(/exceeds/);
  });
});
