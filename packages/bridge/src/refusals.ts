import type { BridgeResponse, FrameHeaders } from './frames.ts';

/**
 * The answers the bridge itself gives a process in the sandbox, instead of the upstream's. Each
 * has a fixed status, a fixed message and says whether a retry can succeed; none repeats anything
 * from the request (docs/spec/bridge-frames.md, "Refusals").
 */
export const REFUSALS = {
  bridge_busy: { status: 503, retryable: true, message: 'the bridge has too many requests in flight; retry shortly' },
  channel_exhausted: {
    status: 503,
    retryable: false,
    message: 'this bridge channel has carried its lifetime limit of requests; start a new session',
  },
  duplicate_request: { status: 409, retryable: false, message: 'this request id was used before; send a new request with a new id' },
  indeterminate: {
    status: 504,
    retryable: false,
    message: 'the outcome of this request is unknown (timeout or lost channel); check the resource before repeating it',
  },
  forward_timeout: { status: 504, retryable: true, message: 'the host did not get an answer in time; the request may be retried' },
  forward_failed: { status: 502, retryable: true, message: 'the host could not reach the target of this request; it may be retried' },
  response_too_large: { status: 502, retryable: false, message: 'the answer is larger than the bridge carries (1 MiB body)' },
  bridge_closed: { status: 503, retryable: true, message: 'the bridge channel was closed; retry, the next request uses the file bridge' },
  malformed_request: { status: 400, retryable: false, message: 'the bridge could not read this request' },
  route_not_allowed: { status: 403, retryable: false, message: 'this method and path are not reachable through the bridge' },
  payload_too_large: { status: 413, retryable: false, message: 'the request body is larger than the bridge allows' },
} as const satisfies Record<string, { status: number; retryable: boolean; message: string }>;

export type RefusalCode = keyof typeof REFUSALS;
export const REFUSAL_CODES = Object.keys(REFUSALS) as RefusalCode[];

/**
 * A refusal as a forwarder answers it (`route_not_allowed`, `payload_too_large`): the bridge
 * counts the request under this code instead of `ok`.
 */
export function refusalAnswer(code: RefusalCode): { status: number; headers: FrameHeaders; body: Uint8Array; refusal: RefusalCode } {
  const { status, retryable, message } = REFUSALS[code];
  return {
    status,
    headers: {
      'content-type': 'application/json',
      'x-sandcast-bridge-retryable': String(retryable),
      ...(code === 'bridge_busy' ? { 'retry-after': '1' } : {}),
    },
    body: Buffer.from(JSON.stringify({ error: { code, message, details: { retryable } } })),
    refusal: code,
  };
}

/** The bridge's own answer to request `id`, as a Sandcast error envelope. */
export function refusal(id: string, code: RefusalCode): BridgeResponse {
  const { status, headers, body } = refusalAnswer(code);
  return { id, status, headers, body: Buffer.from(body).toString('base64') };
}
