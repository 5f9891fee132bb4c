// The egress benchmark's client, run the same way on the host (direct) and in a sandbox (proxy):
// node client.mjs <direct|proxy> <host> <port> <requests> <mib>
// Prints one JSON line: per-request milliseconds for a plain GET (a new connection each time, as
// through a proxy that decides per request), for a CONNECT tunnel (or a bare TCP connection) with
// one GET in it, and the MiB/s of one large download.

import http from 'node:http';
import { connect } from 'node:net';

const [mode, host, port, requests, mib] = process.argv.slice(2);
const viaProxy = mode === 'proxy';
const proxy = viaProxy ? new URL(process.env.HTTP_PROXY) : null;
const target = `${host}:${port}`;

function get(path, sink = false) {
  return new Promise((resolve, reject) => {
    const options = viaProxy
      ? { host: proxy.hostname, port: Number(proxy.port), path: `http://${target}${path}`, headers: { host: target }, agent: false }
      : { host, port: Number(port), path, agent: false };
    http
      .get(options, (res) => {
        let bytes = 0;
        res.on('data', (c) => {
          bytes += c.length;
        });
        res.on('end', () => (res.statusCode === 200 ? resolve(bytes) : reject(new Error(`HTTP ${res.statusCode}`))));
      })
      .on('error', reject);
    void sink;
  });
}

function tunnelGet() {
  return new Promise((resolve, reject) => {
    const socket = viaProxy ? connect(Number(proxy.port), proxy.hostname) : connect(Number(port), host);
    let stage = viaProxy ? 'connect' : 'get';
    let buffer = '';
    const sendGet = () => socket.write(`GET /t HTTP/1.1\r\nhost: ${target}\r\nconnection: close\r\n\r\n`);
    socket.on('connect', () => (viaProxy ? socket.write(`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n\r\n`) : sendGet()));
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      if (stage === 'connect' && buffer.includes('\r\n\r\n')) {
        if (!buffer.startsWith('HTTP/1.1 200')) return reject(new Error(buffer.split('\r\n')[0]));
        stage = 'get';
        buffer = '';
        sendGet();
      }
    });
    socket.on('end', () => (stage === 'get' && buffer.startsWith('HTTP/1.1 200') ? resolve() : reject(new Error('tunnel failed'))));
    socket.on('error', reject);
  });
}

async function times(fn, n) {
  for (let i = 0; i < 10; i++) await fn();
  const out = [];
  for (let i = 0; i < n; i++) {
    const started = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return out;
}

const plain = await times(() => get('/hello'), Number(requests));
const tunnel = await times(tunnelGet, Number(requests));
const size = Number(mib) * 1024 * 1024;
const started = process.hrtime.bigint();
const got = await get(`/bytes/${size}`, true);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
if (got !== size) throw new Error(`downloaded ${got} of ${size} bytes`);
process.stdout.write(`${JSON.stringify({ plain, tunnel, mibPerSecond: Number(mib) / seconds })}\n`);
