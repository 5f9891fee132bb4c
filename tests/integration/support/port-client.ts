import http from 'node:http';
import type { LookupFunction } from 'node:net';

/** `*.localhost` names are loopback (RFC 6761) whatever the resolver says: connect there directly. */
export const loopbackLookup = ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
}) as unknown as LookupFunction;

export interface PortAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request to a sandbox port URL; `headers.host` may name another host than the URL's (an attack). */
export function portRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<PortAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: init.method ?? 'GET', headers: init.headers, lookup: loopbackLookup, agent: false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(init.body);
  });
}

/** Starts a request and resolves with the live response (for streamed answers). */
export function portResponse(url: string, headers: Record<string, string> = {}): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { headers, lookup: loopbackLookup, agent: false }, resolve);
    request.on('error', reject);
    request.end();
  });
}

/** Reads a response body chunk by chunk, as text, losing none between reads ('' once it ended). */
export function chunkReader(response: http.IncomingMessage): { next(): Promise<string> } {
  const chunks: string[] = [];
  let ended = false;
  let waiting: (() => void) | null = null;
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    chunks.push(chunk);
    waiting?.();
  });
  response.on('end', () => {
    ended = true;
    waiting?.();
  });
  return {
    async next() {
      while (chunks.length === 0 && !ended) await new Promise<void>((resolve) => (waiting = resolve));
      waiting = null;
      return chunks.shift() ?? '';
    },
  };
}
