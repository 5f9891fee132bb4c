import { openTerminal, type TerminalConnection } from '@sandcast/client';
import type { TerminalSessionTokenAnswer } from '@sandcast/contracts';
import WebSocket from 'ws';

/** A raw socket that records every frame, for the refusal tests. */
export interface RawTerminalSocket {
  socket: WebSocket;
  frames: Array<Record<string, unknown> | Buffer>;
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  sendJson(frame: unknown): void;
  /** The `{type:"error"}` message the server sent, if any. */
  error(): string | undefined;
}

export function rawTerminalSocket(baseUrl: string, pathAndQuery: string): RawTerminalSocket {
  const url = new URL(pathAndQuery, baseUrl);
  url.protocol = 'ws:';
  const socket = new WebSocket(url);
  const frames: RawTerminalSocket['frames'] = [];
  socket.on('message', (data: Buffer, isBinary) => frames.push(isBinary ? data : JSON.parse(data.toString())));
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  opened.catch(() => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return {
    socket,
    frames,
    opened,
    closed,
    sendJson: (frame) => socket.send(JSON.stringify(frame)),
    error: () => frames.find((f): f is Record<string, unknown> => !Buffer.isBuffer(f) && f.type === 'error')?.message as string | undefined,
  };
}

/** An attached terminal with its output collected as text. */
export interface TestTerminal {
  connection: TerminalConnection;
  output(): string;
  /** Waits until the output (since `from`) matches; fails after `timeoutMs`. */
  waitFor(pattern: RegExp | string, options?: { timeoutMs?: number; from?: number }): Promise<string>;
  type(text: string): void;
}

export async function attachTerminal(
  baseUrl: string,
  token: TerminalSessionTokenAnswer,
  size = { cols: 100, rows: 30 },
): Promise<TestTerminal> {
  let text = '';
  const decoder = new TextDecoder();
  const connection = openTerminal({
    baseUrl,
    token,
    ...size,
    WebSocket: WebSocket as never,
    onOutput: (data) => {
      text += decoder.decode(data, { stream: true });
    },
  });
  await connection.ready;
  return {
    connection,
    output: () => text,
    type: (input) => connection.input(input),
    waitFor: async (pattern, options = {}) => {
      const deadline = Date.now() + (options.timeoutMs ?? 10_000);
      for (;;) {
        const seen = text.slice(options.from ?? 0);
        if (typeof pattern === 'string' ? seen.includes(pattern) : pattern.test(seen)) return seen;
        if (Date.now() > deadline) throw new Error(`terminal output never matched ${pattern}; got: ${JSON.stringify(seen.slice(-2000))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
