import type { BridgeBudgets } from './budgets.ts';
import type { Clock } from './clock.ts';
import { encodeFrame } from './codec.ts';
import type { BridgeResponse, FrameHeaders } from './frames.ts';
import { sanitizeResponseHeaders } from './policy.ts';
import { REFUSALS, type RefusalCode, refusal } from './refusals.ts';
import type { RequestOutcome } from './telemetry.ts';

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
  /** Set by `refusalAnswer`: the request was refused by policy, and is counted so. */
  refusal?: RefusalCode | undefined;
}

/**
 * The server's allowlisted forwarder. It honours `signal` (aborted when the forward budget is
 * spent). A policy refusal is a resolved answer (403, 413). It rejects with an error whose
 * `notSent` is `true` when the request certainly never left the host; any other rejection of an
 * unsafe request is an unknown outcome.
 */
export type Forwarder = (request: ForwardRequest, signal: AbortSignal) => Promise<ForwardResponse>;

function certainlyNotSent(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { notSent?: unknown }).notSent === true;
}

export interface ForwardRun {
  /** GET, HEAD or OPTIONS. */
  safe: boolean;
  /** Settles once with the answer to write and how the request ended; never when cancelled. */
  settled: Promise<{ response: BridgeResponse; outcome: RequestOutcome }>;
  /** Aborts the forward and its timers; `settled` then never settles. */
  cancel(): void;
}

/**
 * Forwards one request within the budgets: the forwarder's signal is aborted after `forwardMs`,
 * and an answer is ready after `responseMs` whatever the forwarder does. An answer the forwarder
 * gives is cleaned (`sanitizeResponseHeaders`) and refused as `response_too_large` when it does
 * not fit in a frame. A safe request whose outcome is unknown answers `forward_timeout` or
 * `forward_failed` (retryable); an unsafe one answers `indeterminate` unless the forwarder said
 * it was certainly not sent.
 */
export function runForward(
  request: ForwardRequest,
  options: { forward: Forwarder; budgets: BridgeBudgets; clock: Clock; maxFrameBytes: number },
): ForwardRun {
  const { clock, budgets } = options;
  const safe = SAFE_METHODS.has(request.method);
  const controller = new AbortController();
  const timers: unknown[] = [];
  let done = false;
  let resolve: (value: { response: BridgeResponse; outcome: RequestOutcome }) => void = () => undefined;
  const settled = new Promise<{ response: BridgeResponse; outcome: RequestOutcome }>((r) => {
    resolve = r;
  });
  const stop = () => {
    done = true;
    for (const t of timers) clock.clearTimeout(t);
  };
  const settle = (response: BridgeResponse, outcome: RequestOutcome) => {
    if (done) return;
    stop();
    resolve({ response, outcome });
  };
  const refuse = (code: RefusalCode) => settle(refusal(request.id, code), code);
  const unknown = (): RefusalCode => (safe ? 'forward_timeout' : 'indeterminate');
  timers.push(
    clock.setTimeout(() => controller.abort(), budgets.forwardMs),
    clock.setTimeout(() => {
      controller.abort();
      refuse(unknown());
    }, budgets.responseMs),
  );
  Promise.resolve()
    .then(() => options.forward(request, controller.signal))
    .then(
      (result) => {
        const response: BridgeResponse = {
          id: request.id,
          status: Number.isInteger(result?.status) && result.status >= 100 && result.status <= 599 ? result.status : 502,
          headers: sanitizeResponseHeaders(result?.headers ?? {}),
          body: Buffer.from(result?.body ?? new Uint8Array()).toString('base64'),
        };
        const bytes = Buffer.byteLength(encodeFrame({ version: 1, type: 'response', ...response })) - 1;
        if (bytes > options.maxFrameBytes) refuse('response_too_large');
        else settle(response, result.refusal !== undefined && Object.hasOwn(REFUSALS, result.refusal) ? result.refusal : 'ok');
      },
      (error: unknown) => {
        if (controller.signal.aborted) refuse(unknown());
        else refuse(safe || certainlyNotSent(error) ? 'forward_failed' : 'indeterminate');
      },
    );
  return {
    safe,
    settled,
    cancel() {
      stop();
      controller.abort();
    },
  };
}
