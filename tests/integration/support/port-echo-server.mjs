// Runs inside a sandbox: `node port-echo-server.mjs <port> <ready file>`. Plain answers, a
// streamed answer whose second half waits for /release, and a WebSocket echo (text frames under
// 126 bytes, enough for the tests) written against the RFC so the sandbox needs no packages.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';

const port = Number(process.argv[2]);
const readyFile = process.argv[3];
const waiting = [];

const server = http.createServer((request, response) => {
  if (request.url === '/stream') {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('first\n');
    waiting.push(() => response.end('second\n'));
    return;
  }
  const bytes = /^\/bytes\/(\d+)$/.exec(request.url ?? '');
  if (bytes) {
    // A large body written with backpressure (benchmarks).
    let left = Number(bytes[1]);
    const block = Buffer.alloc(64 * 1024);
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(left) });
    const pump = () => {
      while (left > 0) {
        const chunk = left >= block.length ? block : block.subarray(0, left);
        left -= chunk.length;
        if (!response.write(chunk)) return void response.once('drain', pump);
      }
      response.end();
    };
    return pump();
  }
  if (request.url === '/release') {
    for (const release of waiting.splice(0)) release();
    return void response.end('released\n');
  }
  response.writeHead(200, {
    'content-type': 'text/plain',
    'x-seen-cookie': request.headers.cookie ?? '',
    'x-seen-auth': request.headers.authorization ?? '',
  });
  response.end(`hello from port ${port}: ${request.method} ${request.url}\n`);
});

server.on('upgrade', (request, socket) => {
  const accept = createHash('sha1').update(`${request.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  let buffer = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (buffer.length >= 6) {
      const opcode = buffer[0] & 0x0f;
      const length = buffer[1] & 0x7f;
      if (buffer.length < 6 + length) return;
      const mask = buffer.subarray(2, 6);
      const payload = Buffer.from(buffer.subarray(6, 6 + length).map((byte, i) => byte ^ mask[i % 4]));
      buffer = buffer.subarray(6 + length);
      if (opcode === 0x8) return void socket.end(Buffer.from([0x88, 0]));
      const text = Buffer.from(`echo:${payload.toString('utf8')}`);
      socket.write(Buffer.concat([Buffer.from([0x81, text.length]), text]));
    }
  });
  socket.on('error', () => undefined);
});

server.listen(port, '127.0.0.1', () => writeFileSync(readyFile, 'ready'));
