import {
  type BridgeRequest,
  type DecodeErrorCode,
  type DecodeResult,
  FRAME_TYPES,
  FRAME_VERSION,
  type Frame,
  type FrameHeaders,
  type FrameType,
  MAX_FRAME_BYTES,
  MAX_ID_BYTES,
  MAX_PATH_BYTES,
} from './frames.ts';

/*
 * The NDJSON codec of the duplex bridge. The decoder takes bytes as they come (any split, a UTF-8
 * character across two chunks included), keeps at most one frame's worth of them, and turns every
 * line into a frame or a coded refusal. Nothing it is fed makes it throw.
 */

const NEWLINE = 0x0a;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const METHOD = /^[A-Z]{1,16}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_MESSAGE_CHARS = 1024;
const NONCE_MAX_CHARS = 128;

/** The fields each frame type has, exactly; `?` marks an optional one. */
const FIELDS: Record<FrameType, readonly string[]> = {
  ready: ['nonce'],
  request: ['id', 'method', 'path', 'headers', 'body'],
  response: ['id', 'status', 'headers', 'body'],
  heartbeat: [],
  error: ['code', 'id?', 'message?'],
};

const KNOWN_TYPES = new Set<string>(FRAME_TYPES);

type Checked = { frame: Frame } | { error: DecodeErrorCode; type?: FrameType; id?: string };

const refuse = (error: DecodeErrorCode, type?: FrameType, id?: string): Checked => ({
  error,
  ...(type ? { type } : {}),
  ...(id !== undefined ? { id } : {}),
});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `undefined` when `value` is a valid id; otherwise why not. */
function idProblem(value: unknown): DecodeErrorCode | undefined {
  if (typeof value !== 'string') return 'malformed_frame';
  if (value.length > MAX_ID_BYTES) return 'id_too_large';
  return PRINTABLE_ASCII.test(value) ? undefined : 'malformed_frame';
}

function validHeaders(value: unknown): value is FrameHeaders {
  if (!isPlainObject(value)) return false;
  for (const [name, text] of Object.entries(value)) {
    // `__proto__` is a token, but no object can hold it as an ordinary key: refused everywhere.
    if (!TOKEN.test(name) || name === '__proto__' || typeof text !== 'string') return false;
  }
  return true;
}

/** A copy in a fixed order, names sorted, so every encoder writes the same bytes. */
function sortedHeaders(headers: FrameHeaders): FrameHeaders {
  const out: FrameHeaders = {};
  for (const name of Object.keys(headers).sort()) out[name] = headers[name] as string;
  return out;
}

function validBody(value: unknown): value is string {
  return typeof value === 'string' && BASE64.test(value);
}

/** Checks a parsed JSON value against the frame table; the result is a fresh, normalised frame. */
function checkFrame(value: unknown): Checked {
  if (!isPlainObject(value)) return refuse('malformed_frame');
  const rawType = value.type;
  const type = typeof rawType === 'string' && KNOWN_TYPES.has(rawType) ? (rawType as FrameType) : undefined;
  if (typeof value.version !== 'number') return refuse('malformed_frame', type);
  if (value.version !== FRAME_VERSION) return refuse('version_mismatch', type);
  if (typeof rawType !== 'string') return refuse('malformed_frame');
  if (!type) return refuse('unknown_type');
  const allowed = FIELDS[type];
  const id = 'id' in value && idProblem(value.id) === undefined ? (value.id as string) : undefined;
  for (const key of Object.keys(value)) {
    if (key !== 'version' && key !== 'type' && !allowed.includes(key) && !allowed.includes(`${key}?`)) {
      return refuse('malformed_frame', type, id);
    }
  }
  for (const key of allowed) if (!key.endsWith('?') && !(key in value)) return refuse('malformed_frame', type, id);
  if ('id' in value) {
    const problem = idProblem(value.id);
    if (problem) return refuse(problem, type);
  }
  switch (type) {
    case 'ready':
      if (typeof value.nonce !== 'string' || value.nonce.length > NONCE_MAX_CHARS) return refuse('malformed_frame', type);
      return { frame: { version: 1, type, nonce: value.nonce } };
    case 'heartbeat':
      return { frame: { version: 1, type } };
    case 'request': {
      const { method, path, headers, body } = value;
      if (typeof method !== 'string' || !METHOD.test(method)) return refuse('malformed_frame', type, id);
      if (typeof path !== 'string' || !path.startsWith('/') || Buffer.byteLength(path) > MAX_PATH_BYTES) {
        return refuse('malformed_frame', type, id);
      }
      if (!validHeaders(headers) || !validBody(body)) return refuse('malformed_frame', type, id);
      return { frame: { version: 1, type, id: id as string, method, path, headers: sortedHeaders(headers), body } };
    }
    case 'response': {
      const { status, headers, body } = value;
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
        return refuse('malformed_frame', type, id);
      }
      if (!validHeaders(headers) || !validBody(body)) return refuse('malformed_frame', type, id);
      return { frame: { version: 1, type, id: id as string, status, headers: sortedHeaders(headers), body } };
    }
    case 'error': {
      const { code, message } = value;
      if (typeof code !== 'string' || !ERROR_CODE.test(code)) return refuse('malformed_frame', type, id);
      if (message !== undefined && (typeof message !== 'string' || message.length > MAX_MESSAGE_CHARS)) {
        return refuse('malformed_frame', type, id);
      }
      return {
        frame: { version: 1, type, code, ...(id !== undefined ? { id } : {}), ...(message !== undefined ? { message } : {}) },
      };
    }
  }
}

/**
 * A request object as the file bridge stores it (`req/<id>.json`: the `request` frame without
 * `version` and `type`), checked by the same rules as a frame.
 */
export function checkRequestObject(value: unknown): { request: BridgeRequest } | { error: DecodeErrorCode; id?: string } {
  if (!isPlainObject(value) || 'version' in value || 'type' in value) return { error: 'malformed_frame' };
  const checked = checkFrame({ ...value, version: FRAME_VERSION, type: 'request' });
  if ('error' in checked) return { error: checked.error, ...(checked.id !== undefined ? { id: checked.id } : {}) };
  const { version: _version, type: _type, ...request } = checked.frame as Extract<Frame, { type: 'request' }>;
  return { request };
}

/**
 * One frame as one line: the canonical encoding (fields in the order of the frame table, header
 * names sorted, no whitespace) followed by `\n`. JSON escaping keeps any newline inside a value
 * out of the line.
 */
export function encodeFrame(frame: Frame): string {
  switch (frame.type) {
    case 'ready':
      return `${JSON.stringify({ version: 1, type: 'ready', nonce: frame.nonce })}\n`;
    case 'heartbeat':
      return `${JSON.stringify({ version: 1, type: 'heartbeat' })}\n`;
    case 'request': {
      const { id, method, path, headers, body } = frame;
      return `${JSON.stringify({ version: 1, type: 'request', id, method, path, headers: sortedHeaders(headers), body })}\n`;
    }
    case 'response': {
      const { id, status, headers, body } = frame;
      return `${JSON.stringify({ version: 1, type: 'response', id, status, headers: sortedHeaders(headers), body })}\n`;
    }
    case 'error': {
      const { code, id, message } = frame;
      return `${JSON.stringify({ version: 1, type: 'error', code, ...(id !== undefined ? { id } : {}), ...(message !== undefined ? { message } : {}) })}\n`;
    }
  }
}

export interface FrameDecoder {
  /** Takes the next bytes; returns what the lines they complete decode to, in order. */
  push(chunk: Uint8Array): DecodeResult[];
  /** The stream ended: a last line without its newline is `malformed_frame`. */
  end(): DecodeResult[];
  /** Bytes held for the line not yet complete; never more than the frame cap. */
  readonly bufferedBytes: number;
}

/**
 * A streaming decoder. A line longer than `maxFrameBytes` is refused as `frame_too_large` as soon
 * as it passes the cap, and its remaining bytes are skipped up to the next newline without being
 * kept. Empty lines are skipped.
 */
export function createFrameDecoder(options: { maxFrameBytes?: number } = {}): FrameDecoder {
  const cap = options.maxFrameBytes ?? MAX_FRAME_BYTES;
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let parts: Uint8Array[] = [];
  let held = 0;
  let discarding = false;

  const finishLine = (line: Uint8Array, bytes: number): DecodeResult | undefined => {
    if (line.length === 0) return undefined;
    let text: string;
    try {
      text = utf8.decode(line);
    } catch {
      return { error: 'malformed_frame', bytes };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { error: 'malformed_frame', bytes };
    }
    return { ...checkFrame(parsed), bytes };
  };

  const take = (): Uint8Array => {
    const line = parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts, held);
    parts = [];
    held = 0;
    return line;
  };

  return {
    get bufferedBytes() {
      return held;
    },
    push(chunk) {
      const results: DecodeResult[] = [];
      let start = 0;
      while (start <= chunk.length) {
        const newline = chunk.indexOf(NEWLINE, start);
        const stop = newline === -1 ? chunk.length : newline;
        const piece = chunk.subarray(start, stop);
        // While discarding an oversized line, its bytes are only skipped.
        if (!discarding && held + piece.length > cap) {
          results.push({ error: 'frame_too_large', bytes: held + piece.length });
          parts = [];
          held = 0;
          discarding = true;
        } else if (!discarding && piece.length > 0) {
          // A copy: the caller may reuse its buffer, and a small slice must not pin a large chunk.
          parts.push(newline === -1 ? Uint8Array.prototype.slice.call(piece) : piece);
          held += piece.length;
        }
        if (newline === -1) break;
        if (discarding) {
          discarding = false;
        } else {
          const bytes = held + 1;
          const result = finishLine(take(), bytes);
          if (result) results.push(result);
        }
        start = newline + 1;
      }
      return results;
    },
    end() {
      if (discarding || held === 0) {
        discarding = false;
        parts = [];
        held = 0;
        return [];
      }
      const bytes = held;
      take();
      return [{ error: 'malformed_frame', bytes }];
    },
  };
}
