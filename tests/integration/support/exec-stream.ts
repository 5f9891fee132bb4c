import http from 'node:http';
import type { ExecStream, SandcastClient } from '@sandcast/client';
import type { ExecStreamFrame } from '@sandcast/contracts';

/** Reads frames one at a time, so a test can act between them. */
export function frameReader(stream: ExecStream) {
  const iterator = stream[Symbol.asyncIterator]();
  return {
    async next(): Promise<ExecStreamFrame | null> {
      const step = await iterator.next();
      return step.done ? null : step.value;
    },
    /** Every remaining frame, up to and with the exit frame. */
    async rest(): Promise<ExecStreamFrame[]> {
      const frames: ExecStreamFrame[] = [];
      for (let step = await iterator.next(); !step.done; step = await iterator.next()) frames.push(step.value);
      return frames;
    },
  };
}

/** Concatenated text of one stream's frames. */
export function textOf(frames: ExecStreamFrame[], stream: 'stdout' | 'stderr'): string {
  return frames
    .filter((f) => f.type === stream)
    .map((f) => (f.type === stream ? f.data : ''))
    .join('');
}

/**
 * Waits until no process whose command line starts with `prefix` is left in the sandbox (read
 * from /proc: minimal images have no ps). Returns the count last seen (0 on success).
 */
export async function waitForNoProcess(options: {
  client: SandcastClient;
  sandboxId: string;
  prefix: string;
  deadlineMs?: number;
}): Promise<number> {
  const deadline = Date.now() + (options.deadlineMs ?? 20_000);
  for (;;) {
    const seen = await options.client.sandboxes.exec(options.sandboxId, {
      command: [
        'sh',
        '-c',
        `for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done | grep -c "^${options.prefix}" || true`,
      ],
    });
    const count = Number(seen.stdout.trim());
    if (count === 0 || Date.now() > deadline) return count;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts a streamed exec over a plain socket and resolves with the first frame; `disconnect()`
 * then drops the connection, as a client that crashes or is killed does. (An in-process fetch
 * that is aborted leaves its connection pooled, which would hold the test server's close open.)
 */
export async function streamThenDisconnect(options: { url: string; path: string; body: unknown; accept?: string }) {
  const request = http.request(options.url + options.path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: options.accept ?? 'application/x-ndjson' },
  });
  request.on('error', () => undefined);
  request.end(JSON.stringify(options.body));
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
  });
  let text = '';
  while (!text.includes('\n')) {
    const chunk = await new Promise<Buffer | null>((resolve) => {
      response.once('data', resolve);
      response.once('end', () => resolve(null));
    });
    if (chunk === null) break;
    text += chunk.toString('utf8');
  }
  response.pause();
  return {
    status: response.statusCode,
    contentType: response.headers['content-type'],
    firstLine: text.slice(0, text.indexOf('\n')),
    disconnect: () => request.destroy(),
  };
}
