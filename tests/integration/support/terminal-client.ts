import { openTerminal, type TerminalConnection } from '@sandcast/client';
import type { TerminalSessionTokenAnswer } from '@sandcast/contracts';
import WebSocket from 'ws';
import { TextCollector } from './text-collector.ts';

/** A raw socket that records every frame, for the refusal tests. */
export interface RawTerminalSocket {
  socket: WebSocket;
  frames: Array<Record<string, unknown> | Buffer>;
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  sendJson(frame: unknown): void;
  /** The `{type:"error"}` message the server sent, if any. */
  error(): string | undefined;
  /** Resolves on the first JSON frame of this type (already received or still to come); rejects if the socket closes first. */
  frame(type: string): Promise<Record<string, unknown>>;
}

export function rawTerminalSocket(baseUrl: string, pathAndQuery: string): RawTerminalSocket {
  const url = new URL(pathAndQuery, baseUrl);
  url.protocol = 'ws:';
  const socket = new WebSocket(url);
  const frames: RawTerminalSocket['frames'] = [];
  const frameListeners = new Set<() => void>();
  socket.on('message', (data: Buffer, isBinary) => {
    frames.push(isBinary ? data : JSON.parse(data.toString()));
    for (const listener of [...frameListeners]) listener();
  });
  const findFrame = (type: string) => frames.find((f): f is Record<string, unknown> => !Buffer.isBuffer(f) && f.type === type);
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
    error: () => findFrame('error')?.message as string | undefined,
    frame: (type) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = findFrame(type);
          if (!found) return;
          frameListeners.delete(check);
          resolve(found);
        };
        frameListeners.add(check);
        check();
        closed.then(() => {
          if (!frameListeners.has(check)) return;
          frameListeners.delete(check);
          reject(
            new Error(`the socket closed without a ${type} frame; frames: ${JSON.stringify(frames.filter((f) => !Buffer.isBuffer(f)))}`),
          );
        });
      }),
  };
}

/** An attached terminal with its output collected as text. */
export interface TestTerminal {
  connection: TerminalConnection;
  /** The `ready` frame the server sent (asserted: attaching fails without it). */
  ready: Awaited<TerminalConnection['ready']>;
  output(): string;
  /** Resolves on the output (since `from`) that matches; fails after `timeoutMs`. */
  waitFor(pattern: RegExp | string, options?: { timeoutMs?: number; from?: number }): Promise<string>;
  type(text: string): void;
}

export async function attachTerminal(
  baseUrl: string,
  token: TerminalSessionTokenAnswer,
  size = { cols: 100, rows: 30 },
): Promise<TestTerminal> {
  const text = new TextCollector();
  const connection = openTerminal({
    baseUrl,
    token,
    ...size,
    WebSocket: WebSocket as never,
    onOutput: (data) => text.push(data),
  });
  const ready = await connection.ready;
  if (ready.type !== 'ready' || ready.terminalSessionId !== token.id) {
    throw new Error(`expected a ready frame for ${token.id}, got ${JSON.stringify(ready)}`);
  }
  return {
    connection,
    ready,
    output: () => text.value,
    type: (input) => connection.input(input),
    waitFor: (pattern, options) => text.waitFor(pattern, options),
  };
}
