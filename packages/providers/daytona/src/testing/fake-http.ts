import type { IncomingMessage, ServerResponse } from 'node:http';

/** A sandbox as the fake keeps it: one `docker run --network none` container. */
export interface FakeSandbox {
  id: string;
  container: string;
  labels: Record<string, string>;
  env: Record<string, string>;
  snapshot: string;
  state: 'started' | 'stopped' | 'archived' | 'destroyed';
  autoStopInterval: number;
  autoArchiveInterval: number;
  autoDeleteInterval: number;
  createdAt: string;
}

export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Quotes one word for a POSIX shell. */
export function shellQuoteForFake(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
