import { z } from 'zod';

/**
 * The browser terminal of a setup session (docs/spec/ws-terminal.md). A client asks for a
 * single-use connect token over REST, opens the WebSocket without any credential in the URL and
 * sends the token in its first frame.
 */

/** Why the server closed a terminal; sent as `{type:"closed", reason}` before the socket closes. */
export const TERMINAL_CLOSE_REASONS = [
  'expired',
  'ssh_closed',
  'setup_finished',
  'setup_cancelled',
  /** A session's sandbox terminal: its shell exited, or the sandbox stopped or was torn down. */
  'sandbox_ended',
  'server_shutdown',
] as const;
export type TerminalCloseReason = (typeof TERMINAL_CLOSE_REASONS)[number];

/** WebSocket close codes the server uses. */
export const TERMINAL_CLOSE_CODES = {
  /** The terminal ended for one of the close reasons (except shutdown). */
  normal: 1000,
  /** The server is shutting down. */
  goingAway: 1001,
  /** Refused: bad, used or expired token, token in the URL, no or wrong first frame, session not running, host key changed. */
  policy: 1008,
  /** A frame larger than TERMINAL_MAX_FRAME_BYTES. */
  tooBig: 1009,
  /** The terminal's source (PTY or SSH) could not be opened. */
  internal: 1011,
} as const;

/** Largest client frame, in bytes; a larger one closes the socket with 1009. */
export const TERMINAL_MAX_FRAME_BYTES = 64 * 1024;
/** The first `auth` frame must arrive within this many milliseconds of the upgrade. */
export const TERMINAL_AUTH_TIMEOUT_MS = 10_000;
/** How long a connect token may be used at most; it is also bounded by the setup's expiry. */
export const TERMINAL_TOKEN_TTL_MS = 5 * 60 * 1000;
/** How much recent output a (re)attaching terminal is sent first. */
export const TERMINAL_REPLAY_BYTES = 64 * 1024;

export const TERMINAL_CONNECTION_TYPES = ['pty', 'ssh'] as const;

export const TerminalSessionTokenAnswerSchema = z.object({
  /** The terminal session id; the WebSocket names it in `?terminalSessionId=`. */
  id: z.string(),
  /** Single-use; send it only in the first WebSocket frame. */
  token: z.string(),
  /** The token cannot be used to connect after this instant. */
  expiresAt: z.string(),
  /** The setup session it attaches to; null for a session's sandbox terminal. */
  setupSessionId: z.string().nullable(),
  /** The session whose primary sandbox it attaches to; null for a setup terminal. */
  sessionId: z.string().nullable().default(null),
  environmentId: z.string().nullable(),
  /** What the terminal attaches to: the provider's PTY, or the provider's SSH endpoint. */
  connectionType: z.enum(TERMINAL_CONNECTION_TYPES),
  /** Path (with `?terminalSessionId=`) to open the WebSocket on; add `&cols=…&rows=…`. */
  websocketPath: z.string(),
});
export type TerminalSessionTokenAnswer = z.infer<typeof TerminalSessionTokenAnswerSchema>;

const dimension = (name: string) =>
  z.coerce.number().int(`${name} must be a whole number`).min(1, `${name} must be at least 1`).max(1000, `${name} must be at most 1000`);

/** The WebSocket's query string. A `token` parameter is refused: the token travels in the first frame. */
export const TerminalSocketQuerySchema = z.strictObject({
  terminalSessionId: z.string().min(1, 'terminalSessionId is required'),
  cols: dimension('cols').default(80),
  rows: dimension('rows').default(24),
  /** `binary` (default): output as binary frames of raw bytes; `json`: `{type:"output", data}` text frames. */
  output: z.enum(['binary', 'json']).default('binary'),
});
export type TerminalSocketQuery = z.input<typeof TerminalSocketQuerySchema>;

export const TerminalClientFrameSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auth'), token: z.string().min(1).max(256) }),
  z.strictObject({ type: z.literal('input'), data: z.string() }),
  z.strictObject({ type: z.literal('resize'), cols: dimension('cols'), rows: dimension('rows') }),
]);
export type TerminalClientFrame = z.infer<typeof TerminalClientFrameSchema>;

export const TerminalServerFrameSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('ready'),
    terminalSessionId: z.string(),
    /** True when an existing shell was re-attached (its recent output follows as replay). */
    reattached: z.boolean(),
    /** Bytes of recent output replayed right after this frame. */
    replayBytes: z.number().int(),
  }),
  z.object({ type: z.literal('output'), data: z.string() }),
  z.object({ type: z.literal('error'), message: z.string() }),
  z.object({ type: z.literal('closed'), reason: z.enum(TERMINAL_CLOSE_REASONS) }),
]);
export type TerminalServerFrame = z.infer<typeof TerminalServerFrameSchema>;
