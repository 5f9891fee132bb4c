import { createServer } from 'node:net';
import { connect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { readClientHello } from './client-hello.ts';

/** A real ClientHello from node's TLS client, captured on loopback. */
async function hello(servername?: string): Promise<Buffer> {
  const server = createServer();
  const first = new Promise<Buffer>((resolve) =>
    server.once('connection', (socket) =>
      socket.once('data', (chunk: Buffer) => {
        resolve(chunk);
        socket.destroy();
      }),
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect({ host: '127.0.0.1', port: (server.address() as { port: number }).port, servername, rejectUnauthorized: false });
  client.on('error', () => undefined);
  const bytes = await first;
  client.destroy();
  server.close();
  return bytes;
}

describe('reading a ClientHello', () => {
  it('finds the server name, and says when there is none', async () => {
    expect(readClientHello(await hello('registry.npmjs.org'))).toEqual({ kind: 'hello', serverName: 'registry.npmjs.org' });
    // node sends no server_name for an IP address.
    expect(readClientHello(await hello(''))).toEqual({ kind: 'hello', serverName: null });
  });

  it('waits for a hello that is not all there, and never throws on a truncated or lying one', async () => {
    const full = await hello('a.example.com');
    for (let cut = 0; cut < full.length; cut++) {
      expect(readClientHello(full.subarray(0, cut)).kind).toBe('incomplete');
    }
    // Lengths that point past the record: refused as not TLS, never read out of bounds.
    const lying = Buffer.from(full);
    lying.writeUInt16BE(0xffff, 5 + 4 + 2 + 32 + 1 + lying[5 + 4 + 2 + 32]!);
    expect(() => readClientHello(lying)).not.toThrow();
    expect(readClientHello(lying).kind).not.toBe('hello');
    for (let i = 0; i < 200; i++) {
      const noise = Buffer.from(full);
      noise[9 + Math.floor(Math.random() * (noise.length - 9))] = Math.floor(Math.random() * 256);
      expect(() => readClientHello(noise)).not.toThrow();
    }
  });

  it('tells other protocols apart', () => {
    expect(readClientHello(Buffer.from('GET / HTTP/1.1\r\n\r\n'))).toEqual({ kind: 'not_tls' });
    expect(readClientHello(Buffer.from([0x16, 0x02, 0x00, 0x00, 0x05]))).toEqual({ kind: 'not_tls' });
    expect(readClientHello(Buffer.alloc(0))).toEqual({ kind: 'incomplete' });
  });
});
