import type { FrameHeaders } from './frames.ts';

/** Safe methods: repeating them changes nothing, so an unknown outcome can be retried. */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A request as the forwarder gets it: the body decoded. */
export interface ForwardRequest {
  id: string;
  method: string;
  path: string;
  headers: FrameHeaders;
  body: Buffer;
}

/** The forwarder's answer; the bridge adds the id and encodes the body. */
export interface ForwardResponse {
  status: number;
  headers: FrameHeaders;
  body: Uint8Array;
}

/**
 * The server's allowlisted forwarder. It honours `signal` (aborted when the forward budget is
 * spent). A policy refusal is a resolved answer (403, 413). It rejects with an error whose
 * `notSent` is `true` when the request certainly never left the host; any other rejection of an
 * unsafe request is an unknown outcome.
 */
export type Forwarder = (request: ForwardRequest, signal: AbortSignal) => Promise<ForwardResponse>;

export function certainlyNotSent(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { notSent?: unknown }).notSent === true;
}
