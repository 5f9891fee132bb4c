// Run inside a sandbox's network namespace (nsenter --net=…): connects to 127.0.0.1:<port> there
// and relays stdin → socket and socket → stdout. Writes one byte "+" first once connected, so the
// host side knows the port answers before it sends anything; on failure it prints why on stderr.
import net from 'node:net';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  process.stderr.write('usage: port-forwarder.mjs <port 1-65535>\n');
  process.exit(2);
}
const socket = net.connect({ host: '127.0.0.1', port });
socket.setNoDelay(true);
socket.once('error', (error) => {
  process.stderr.write(`${error.code ?? 'error'}: ${error.message}\n`);
  process.exit(1);
});
socket.once('connect', () => {
  process.stdout.write('+');
  socket.pipe(process.stdout);
  process.stdin.pipe(socket);
  socket.once('close', () => process.exit(0));
});
