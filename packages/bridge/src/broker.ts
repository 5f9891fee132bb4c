import { type BridgeBudgets, checkBudgets, checkPositiveInteger, DEFAULT_BUDGETS } from './budgets.ts';
import { type Clock, systemClock } from './clock.ts';
import { encodeFrame } from './codec.ts';
import { type Forwarder, type ForwardRun, runForward, SAFE_METHODS } from './forward.ts';
import { type BridgeResponse, type DecodeResult, type Frame, MAX_FRAME_BYTES, type RequestFrame } from './frames.ts';
import { MAX_LIFETIME_REQUESTS, RequestLedger } from './ledger.ts';
import { type RefusalCode, refusal } from './refusals.ts';
import { type BridgeLog, type BridgeTelemetry, type LossClass, noBridgeLog, noBridgeTelemetry, type RequestOutcome } from './telemetry.ts';

export const MAX_IN_FLIGHT = 64;
export const HEARTBEAT_INTERVAL_MS = 5_000;
/** Intervals of silence after which the channel is lost. */
export const MISSED_HEARTBEATS = 3;

/**
 * Where the host's frames go: the gateway's stdin. `write` returning `false` means the sink is
 * full (a Node stream's `write`); with `drained` (a Node stream's `once('drain')`) the broker then
 * stops reading requests until it drains, so a gateway that does not read cannot make the host
 * buffer without bound — and one that stays full for the loss period has lost the channel.
 */
export interface FrameSink {
  write(line: string): boolean | undefined;
  end(): void;
  drained?(): Promise<void>;
}

/** Why the host closed a channel on purpose. */
export type CloseReason = 'kill_switch' | 'teardown';

/** How a channel ended: lost (once, never reopened), or closed by the host. */
export type ChannelEnd =
  | { kind: 'lost'; event: 'duplex_channel_lost'; lossClass: LossClass; pendingSafe: number; pendingUnsafe: number }
  | { kind: 'closed'; reason: CloseReason; pendingSafe: number; pendingUnsafe: number };

export interface BrokerOptions {
  /** The frames after READY (`awaitReady`'s `frames`). */
  frames: AsyncIterable<DecodeResult>;
  sink: FrameSink;
  forward: Forwarder;
  clock?: Clock;
  budgets?: BridgeBudgets;
  maxInFlight?: number;
  maxLifetimeRequests?: number;
  heartbeatIntervalMs?: number;
  missedHeartbeats?: number;
  maxFrameBytes?: number;
  /** Bytes of answers kept to replay to a repeated id (default 4 MiB). */
  maxRetainedAnswerBytes?: number;
  telemetry?: BridgeTelemetry;
  log?: BridgeLog;
}

export interface BrokerStats {
  inFlight: number;
  lifetimeIds: number;
  retainedBytes: number;
  decodeErrors: number;
}

export interface DuplexBroker {
  /** Settles once, when the channel is lost or closed. */
  readonly ended: Promise<ChannelEnd>;
  /**
   * Closes the channel (the kill switch, a teardown): pending unsafe requests are answered 504
   * `indeterminate`, pending safe ones 503 `bridge_closed` (retryable), then the sink ends.
   */
  close(reason: CloseReason): void;
  stats(): BrokerStats;
}

interface Pending {
  id: string;
  safe: boolean;
  started: number;
  run: ForwardRun;
}

/**
 * The host side of one duplex channel. Reads request frames, forwards each once through
 * `forward` within the budgets, writes the answers, sends a heartbeat every interval, and ends
 * the channel for good when the gateway goes silent, the stream ends or fails, or a write fails.
 */
export function createDuplexBroker(options: BrokerOptions): DuplexBroker {
  const budgets = checkBudgets(options.budgets ?? DEFAULT_BUDGETS);
  const maxInFlight = checkPositiveInteger('maxInFlight', options.maxInFlight ?? MAX_IN_FLIGHT);
  const maxLifetime = checkPositiveInteger('maxLifetimeRequests', options.maxLifetimeRequests ?? MAX_LIFETIME_REQUESTS);
  const interval = checkPositiveInteger('heartbeatIntervalMs', options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS);
  const missed = checkPositiveInteger('missedHeartbeats', options.missedHeartbeats ?? MISSED_HEARTBEATS);
  const maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
  const clock = options.clock ?? systemClock;
  const telemetry = options.telemetry ?? noBridgeTelemetry;
  const log = options.log ?? noBridgeLog;
  const ledger = new RequestLedger({
    maxIds: maxLifetime,
    ...(options.maxRetainedAnswerBytes ? { maxRetainedBytes: options.maxRetainedAnswerBytes } : {}),
  });
  const pending = new Map<string, Pending>();
  const iterator = options.frames[Symbol.asyncIterator]();
  let over = false;
  let decodeErrors = 0;
  let lastHeard = clock.now();
  /** Since when the sink has been full, or undefined. */
  let fullSince: number | undefined;
  let drain: Promise<void> | undefined;
  let heartbeatTimer: unknown;
  let resolveEnded: (end: ChannelEnd) => void = () => undefined;
  const ended = new Promise<ChannelEnd>((resolve) => {
    resolveEnded = resolve;
  });

  const seconds = (since: number) => Math.max(0, clock.now() - since) / 1000;

  /** Writes one frame; a sink that throws has lost the channel. */
  const send = (frame: Frame): boolean => {
    if (over) return false;
    try {
      const room = options.sink.write(encodeFrame(frame));
      if (room === false && options.sink.drained && fullSince === undefined) {
        fullSince = clock.now();
        drain = options.sink.drained().then(
          () => {
            fullSince = undefined;
            drain = undefined;
            lastHeard = clock.now(); // nothing was read while full: the silence was not the gateway's
          },
          () => lose('write_failed'),
        );
      }
      return true;
    } catch {
      lose('write_failed');
      return false;
    }
  };

  const answer = (response: BridgeResponse) => send({ version: 1, type: 'response', ...response });

  const counts = () => {
    let pendingSafe = 0;
    for (const p of pending.values()) if (p.safe) pendingSafe++;
    return { pendingSafe, pendingUnsafe: pending.size - pendingSafe };
  };

  /** Stops everything: timers, forwards, the reader, the sink. */
  const shutDown = () => {
    over = true;
    clock.clearTimeout(heartbeatTimer);
    for (const p of pending.values()) p.run.cancel();
    pending.clear();
    try {
      void iterator.return?.()?.catch(() => undefined);
    } catch {
      // The reader is being given up.
    }
    try {
      options.sink.end();
    } catch {
      // The sink is gone already.
    }
  };

  function lose(lossClass: LossClass): void {
    if (over) return;
    const tally = counts();
    for (const p of pending.values()) telemetry.requestFinished('duplex_v1', p.safe ? 'lost' : 'indeterminate', seconds(p.started));
    shutDown();
    telemetry.channelLost(lossClass);
    log.warn({ event: 'duplex_channel_lost', lossClass, ...tally }, 'duplex bridge channel lost; it is not reopened');
    resolveEnded({ kind: 'lost', event: 'duplex_channel_lost', lossClass, ...tally });
  }

  /** Settles one request once: its answer is written and remembered for a repeat of its id. */
  const finish = (p: Pending, response: BridgeResponse, outcome: RequestOutcome) => {
    if (pending.get(p.id) !== p) return;
    pending.delete(p.id);
    ledger.settle(p.id, response);
    answer(response);
    telemetry.requestFinished('duplex_v1', outcome, seconds(p.started));
  };

  const refuse = (p: Pending, code: RefusalCode) => finish(p, refusal(p.id, code), code);

  const onRequest = (frame: RequestFrame) => {
    const { id } = frame;
    const seen = ledger.lookup(id);
    if (seen) {
      // Never forwarded twice: the first answer again, or a refusal once it is forgotten.
      // A repeat while the first is in flight gets that one answer.
      if (seen.state === 'settled') answer(seen.response);
      else if (seen.state === 'forgotten') {
        answer(refusal(id, 'duplicate_request'));
        telemetry.requestFinished('duplex_v1', 'duplicate_request', 0);
      }
      return;
    }
    if (pending.size >= maxInFlight) {
      answer(refusal(id, 'bridge_busy'));
      telemetry.requestFinished('duplex_v1', 'bridge_busy', 0);
      return;
    }
    if (!ledger.hasRoom) {
      answer(refusal(id, 'channel_exhausted'));
      telemetry.requestFinished('duplex_v1', 'channel_exhausted', 0);
      return;
    }
    ledger.begin(id);
    const request = { id, method: frame.method, path: frame.path, headers: frame.headers, body: Buffer.from(frame.body, 'base64') };
    const run = runForward(request, { forward: options.forward, budgets, clock, maxFrameBytes });
    const p: Pending = { id, safe: SAFE_METHODS.has(frame.method), started: clock.now(), run };
    pending.set(id, p);
    void run.settled.then(({ response, outcome }) => finish(p, response, outcome));
  };

  const onResult = (result: DecodeResult) => {
    lastHeard = clock.now();
    if ('error' in result) {
      decodeErrors++;
      // A request that can be attributed is answered, so its caller does not wait for nothing.
      if (result.type === 'request' && result.id !== undefined && !ledger.lookup(result.id))
        answer(refusal(result.id, 'malformed_request'));
      return;
    }
    if (result.frame.type === 'request') onRequest(result.frame);
    // Heartbeats only prove liveness; a READY, a response or an error from the gateway changes nothing here.
  };

  const beat = () => {
    if (over) return;
    // A full sink first: while it is full the gateway's lines are not read, so its silence is ours.
    if (fullSince !== undefined && clock.now() - fullSince >= interval * missed) {
      lose('write_failed');
      return;
    }
    if (clock.now() - lastHeard >= interval * missed) {
      lose('heartbeat_timeout');
      return;
    }
    if (send({ version: 1, type: 'heartbeat' })) heartbeatTimer = clock.setTimeout(beat, interval);
  };
  heartbeatTimer = clock.setTimeout(beat, interval);

  void (async () => {
    try {
      for (;;) {
        const step = await iterator.next();
        // While the gateway does not read its stdin, its requests wait (one decoded chunk at most).
        while (drain && !over) await Promise.race([drain, ended]);
        if (over) return;
        if (step.done) break;
        onResult(step.value);
      }
      lose('stream_ended');
    } catch {
      lose('stream_error');
    }
  })();

  telemetry.channelOpened();
  log.info({ event: 'duplex_channel_open' }, 'duplex bridge channel open');

  return {
    ended,
    close(reason) {
      if (over) return;
      const tally = counts();
      for (const p of [...pending.values()]) {
        p.run.cancel();
        refuse(p, p.safe ? 'bridge_closed' : 'indeterminate');
      }
      if (over) return; // a write failed while answering: the channel was lost instead
      send({ version: 1, type: 'error', code: 'channel_closed' });
      shutDown();
      log.info({ event: 'duplex_channel_closed', reason, ...tally }, 'duplex bridge channel closed by the host');
      resolveEnded({ kind: 'closed', reason, ...tally });
    },
    stats: () => ({ inFlight: pending.size, lifetimeIds: ledger.ids, retainedBytes: ledger.retainedBytes, decodeErrors }),
  };
}
