import {
  TERMINAL_CLOSE_REASONS,
  type TerminalClientFrame,
  type TerminalCloseReason,
  type TerminalServerFrame,
  TerminalServerFrameSchema,
  type TerminalSessionTokenAnswer,
} from '@sandcast/contracts';

/** The part of the WebSocket API the terminal uses: the browser's, Node 22's, or the `ws` package's. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | ArrayBufferLike | Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: (event: unknown) => void): void;
}

export interface TerminalEvents {
  /** The token was accepted; `reattached` when an existing shell was joined (its replay follows). */
  onReady?(frame: Extract<TerminalServerFrame, { type: 'ready' }>): void;
  /** Terminal output, as bytes (write it to xterm.js as a Uint8Array). */
  onOutput?(data: Uint8Array): void;
  /** The server refused or reported something; the socket usually closes right after. */
  onError?(message: string): void;
  /** The terminal ended for a reason (setup finished, cancelled, expired, shell closed, shutdown). */
  onClosed?(reason: TerminalCloseReason): void;
  /** The socket closed (after onClosed/onError, or when the connection dropped). */
  onSocketClose?(event: { code: number; reason: string }): void;
}

export interface OpenTerminalOptions extends TerminalEvents {
  /** e.g. http://127.0.0.1:7420 (ws: or wss: is derived from it). */
  baseUrl: string;
  /** The answer of `client.customImages.terminalSessionToken()`; the token is used once. */
  token: Pick<TerminalSessionTokenAnswer, 'token' | 'websocketPath'>;
  cols: number;
  rows: number;
  /** Default: globalThis.WebSocket. In Node 20 pass the `ws` package's WebSocket. */
  WebSocket?: (new (url: string) => WebSocketLike) | undefined;
}

export interface TerminalConnection {
  readonly socket: WebSocketLike;
  /** Resolves when the server sent `ready`, rejects when it refused or the socket closed first. */
  readonly ready: Promise<Extract<TerminalServerFrame, { type: 'ready' }>>;
  /** Resolves when the socket has closed, with the terminal's reason when the server gave one. */
  readonly closed: Promise<{ code: number; reason: TerminalCloseReason | null; error: string | null }>;
  input(data: string): void;
  resize(cols: number, rows: number): void;
  close(): void;
}

/** The WebSocket URL for a token answer; nothing secret is in it. */
export function terminalSocketUrl(baseUrl: string, websocketPath: string, size: { cols: number; rows: number }): string {
  const url = new URL(websocketPath, baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('cols', String(size.cols));
  url.searchParams.set('rows', String(size.rows));
  return url.toString();
}

/**
 * Opens a setup session's browser terminal: connects, authenticates with the token in the first
 * frame (never in the URL), and turns frames into callbacks. Used by the web UI, the CLI and tests.
 */
export function openTerminal(options: OpenTerminalOptions): TerminalConnection {
  const Impl = options.WebSocket ?? (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  if (!Impl) throw new Error('no WebSocket implementation: pass one as options.WebSocket (in Node 20, the `ws` package)');
  const socket = new Impl(terminalSocketUrl(options.baseUrl, options.token.websocketPath, options));
  socket.binaryType = 'arraybuffer';
  const send = (frame: TerminalClientFrame) => {
    if (socket.readyState === 1) socket.send(JSON.stringify(frame));
  };
  let reason: TerminalCloseReason | null = null;
  let error: string | null = null;
  let resolveReady: (frame: Extract<TerminalServerFrame, { type: 'ready' }>) => void = () => undefined;
  let rejectReady: (error: Error) => void = () => undefined;
  const ready = new Promise<Extract<TerminalServerFrame, { type: 'ready' }>>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  ready.catch(() => undefined);
  const closed = new Promise<{ code: number; reason: TerminalCloseReason | null; error: string | null }>((resolve) => {
    socket.addEventListener('close', (event) => {
      rejectReady(new Error(error ?? `the terminal socket closed (${event.code}) before it was ready`));
      options.onSocketClose?.(event);
      resolve({ code: event.code, reason, error });
    });
  });
  socket.addEventListener('open', () => send({ type: 'auth', token: options.token.token }));
  socket.addEventListener('message', (event) => {
    if (typeof event.data !== 'string') {
      const bytes = event.data instanceof ArrayBuffer ? new Uint8Array(event.data) : (event.data as Uint8Array);
      options.onOutput?.(bytes);
      return;
    }
    const parsed = TerminalServerFrameSchema.safeParse(JSON.parse(event.data));
    if (!parsed.success) return;
    const frame = parsed.data;
    switch (frame.type) {
      case 'ready':
        resolveReady(frame);
        options.onReady?.(frame);
        return;
      case 'output':
        options.onOutput?.(new TextEncoder().encode(frame.data));
        return;
      case 'error':
        error = frame.message;
        options.onError?.(frame.message);
        return;
      case 'closed':
        reason = (TERMINAL_CLOSE_REASONS as readonly string[]).includes(frame.reason) ? frame.reason : null;
        if (reason) options.onClosed?.(reason);
        return;
      default: {
        const never: never = frame;
        return never;
      }
    }
  });
  return {
    socket,
    ready,
    closed,
    input: (data) => send({ type: 'input', data }),
    resize: (cols, rows) => send({ type: 'resize', cols, rows }),
    close: () => socket.close(1000, 'client closed'),
  };
}
