// An upstream for the egress tests, run inside the test's network namespace:
// node upstream-server.mjs <address> <http port> <https port> <cert file> <key file>
// Answers every request with "upstream <proto> <Host> <method> <path>" and echoes a POST body's
// length; prints "ready" once both listen.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';

const [address, httpPort, httpsPort, certFile, keyFile] = process.argv.slice(2);
const handler = (proto) => (req, res) => {
  let length = 0;
  req.on('data', (chunk) => {
    length += chunk.length;
  });
  req.on('end', () => {
    if (req.url?.startsWith('/bytes/')) {
      const size = Number(req.url.slice('/bytes/'.length));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
      res.end(Buffer.alloc(size, 0x61));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`upstream ${proto} ${req.headers.host} ${req.method} ${req.url} ${length}\n`);
  });
};
const plain = createServer(handler('http'));
const tls = createTlsServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, handler('https'));
let listening = 0;
const ready = () => {
  if (++listening === 2) process.stdout.write('ready\n');
};
plain.listen(Number(httpPort), address, ready);
tls.listen(Number(httpsPort), address, ready);
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
