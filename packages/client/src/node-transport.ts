import http from 'node:http';
import https from 'node:https';
import type { JsonTransport } from './client.ts';

/** The largest answer the transport reads (the API's own JSON answers are far smaller). */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * A JSON transport over Node's own HTTP client with kept-alive connections, for Node callers of
 * the SDK (scripts, agents' tools, long-running services). The same requests as the default `fetch`, without the
 * WHATWG stream machinery around each one: about 0.3 ms less per request on loopback
 * (docs/perf/control-plane-overhead.md). Idle connections never keep the process alive. Only
 * `SandcastClient.request` (JSON in, JSON out) uses it; streams and archives keep `fetch`.
 */
export function createNodeTransport(options: { maxSockets?: number } = {}): JsonTransport & { close(): void } {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 16 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 16 }),
  };
  const send: JsonTransport = ({ method, url, headers, body }) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const protocol = target.protocol === 'https:' ? 'https:' : target.protocol === 'http:' ? 'http:' : null;
      if (!protocol) {
        reject(new Error(`the Node transport speaks http and https, not ${target.protocol}`));
        return;
      }
      const outgoing = { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) };
      const request = (protocol === 'https:' ? https : http).request(
        target,
        { method, headers: outgoing, agent: agents[protocol] },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
              response.destroy(new Error(`the answer exceeds ${MAX_ANSWER_BYTES} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          response.on('error', reject);
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  return Object.assign(send, {
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  });
}
