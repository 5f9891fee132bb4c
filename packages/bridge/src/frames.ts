/**
 * The frames of the duplex bridge (`duplex_v1`, docs/spec/bridge-frames.md) and their limits.
 * Plain types and constants: the codec checks them, the broker and the handshake speak them.
 */

/** The one protocol version this codec speaks. */
export const FRAME_VERSION = 1;

/** The largest frame, in UTF-8 bytes without the newline: a 1 MiB body in base64 plus headers. */
export const MAX_FRAME_BYTES = 2 * 1024 * 1024;

/** The largest request id, in bytes (printable ASCII, so bytes = characters). */
export const MAX_ID_BYTES = 256;

/** The largest request path, in bytes. */
export const MAX_PATH_BYTES = 8192;

export const FRAME_TYPES = ['ready', 'request', 'response', 'heartbeat', 'error'] as const;
export type FrameType = (typeof FRAME_TYPES)[number];

/** Header names and values as one object; names are lowercase HTTP tokens. */
export type FrameHeaders = Record<string, string>;

export interface ReadyFrame {
  version: 1;
  type: 'ready';
  nonce: string;
}

export interface RequestFrame {
  version: 1;
  type: 'request';
  id: string;
  method: string;
  path: string;
  headers: FrameHeaders;
  /** base64, possibly empty. */
  body: string;
}

export interface ResponseFrame {
  version: 1;
  type: 'response';
  id: string;
  status: number;
  headers: FrameHeaders;
  /** base64, possibly empty. */
  body: string;
}

export interface HeartbeatFrame {
  version: 1;
  type: 'heartbeat';
}

export interface ErrorFrame {
  version: 1;
  type: 'error';
  code: string;
  id?: string;
  message?: string;
}

export type Frame = ReadyFrame | RequestFrame | ResponseFrame | HeartbeatFrame | ErrorFrame;

/** A request as both transports carry it: the `request` frame without `version` and `type`. */
export type BridgeRequest = Omit<RequestFrame, 'version' | 'type'>;

/** A response as both transports carry it: the `response` frame without `version` and `type`. */
export type BridgeResponse = Omit<ResponseFrame, 'version' | 'type'>;

/** Why the decoder refused a line. Closed: the C gateway reports the same codes. */
export const DECODE_ERROR_CODES = ['malformed_frame', 'unknown_type', 'version_mismatch', 'frame_too_large', 'id_too_large'] as const;
export type DecodeErrorCode = (typeof DECODE_ERROR_CODES)[number];

/**
 * One decoded line: a frame, or the reason it was refused. `bytes` is the line's length with its
 * newline (for a line too large: the bytes seen when it was given up). A refusal carries the
 * frame's `type` when the line was an object naming a known type, and its `id` when the id itself
 * was valid, so that a receiver can answer the one request instead of leaving it hanging.
 */
export type DecodeResult =
  | { frame: Frame; bytes: number }
  | { error: DecodeErrorCode; bytes: number; type?: FrameType | undefined; id?: string | undefined };
