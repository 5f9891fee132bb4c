import type { GateReason, Transport } from './gate.ts';
import { HANDSHAKE_FAILURES, type HandshakeFailure } from './handshake.ts';
import { REFUSAL_CODES, type RefusalCode } from './refusals.ts';

/**
 * The bridge's metrics: fixed names, and labels whose values come from closed sets only. No
 * path, header, body, id, token or error text can reach a recorder through this module: every
 * value is checked against its set at run time and replaced by `other` when it is not in it.
 */
export const BRIDGE_METRICS = {
  channelOpen: 'sandbox_duplex_channel_open_total',
  channelFallback: 'sandbox_duplex_channel_fallback_total',
  channelLoss: 'sandbox_duplex_channel_loss_total',
  requestDuration: 'sandbox_bridge_request_duration_seconds',
} as const;

export type BridgeCounterName = (typeof BRIDGE_METRICS)['channelOpen' | 'channelFallback' | 'channelLoss'];
export type BridgeHistogramName = (typeof BRIDGE_METRICS)['requestDuration'];

/** The label names of each metric, in order. */
export const BRIDGE_METRIC_LABELS = {
  [BRIDGE_METRICS.channelOpen]: ['provider'],
  [BRIDGE_METRICS.channelFallback]: ['provider', 'fallback_reason'],
  [BRIDGE_METRICS.channelLoss]: ['provider', 'loss_class'],
  [BRIDGE_METRICS.requestDuration]: ['provider', 'transport', 'outcome'],
} as const;

export const PROVIDER_LABELS = ['local', 'docker', 'kubernetes', 'daytona', 'fake', 'other'] as const;
export type ProviderLabel = (typeof PROVIDER_LABELS)[number];

export type FallbackReason = GateReason | HandshakeFailure;
export const FALLBACK_REASONS: readonly FallbackReason[] = ['gate_off', 'capability_absent', ...HANDSHAKE_FAILURES];

/** How a duplex channel was lost (closing it on purpose is not a loss). */
export const LOSS_CLASSES = ['heartbeat_timeout', 'stream_ended', 'stream_error', 'write_failed'] as const;
export type LossClass = (typeof LOSS_CLASSES)[number];

/** How one request ended: answered by its target (`ok`, whatever the status), refused by the bridge, or lost with its channel. */
export type RequestOutcome = 'ok' | RefusalCode | 'lost';
export const REQUEST_OUTCOMES: readonly RequestOutcome[] = ['ok', ...REFUSAL_CODES, 'lost'];

export const REQUEST_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 35];

/** What a metrics backend implements (apps/server: prom-client). */
export interface BridgeMetricsRecorder {
  increment(name: BridgeCounterName, labels: Readonly<Record<string, string>>): void;
  observe(name: BridgeHistogramName, labels: Readonly<Record<string, string>>, seconds: number): void;
}

/** What the bridge reports; one per sandbox, bound to its provider. */
export interface BridgeTelemetry {
  channelOpened(): void;
  channelFellBack(reason: FallbackReason): void;
  channelLost(lossClass: LossClass): void;
  requestFinished(transport: Transport, outcome: RequestOutcome, seconds: number): void;
}

const known = <T extends string>(set: readonly T[], value: unknown, fallback: T): T =>
  typeof value === 'string' && (set as readonly string[]).includes(value) ? (value as T) : fallback;

/** A provider id as a label: one of the allowlist, `other` for anything else. */
export function providerLabel(provider: unknown): ProviderLabel {
  return known(PROVIDER_LABELS, provider, 'other');
}

/** Telemetry over a recorder; a recorder that throws is ignored, never the bridge's problem. */
export function createBridgeTelemetry(recorder: BridgeMetricsRecorder, options: { provider: unknown }): BridgeTelemetry {
  const provider = providerLabel(options.provider);
  const quietly = (record: () => void) => {
    try {
      record();
    } catch {
      // Telemetry never fails a request.
    }
  };
  return {
    channelOpened: () => quietly(() => recorder.increment(BRIDGE_METRICS.channelOpen, { provider })),
    channelFellBack: (reason) =>
      quietly(() =>
        recorder.increment(BRIDGE_METRICS.channelFallback, {
          provider,
          fallback_reason: known(FALLBACK_REASONS, reason, 'channel_open_failed'),
        }),
      ),
    channelLost: (lossClass) =>
      quietly(() =>
        recorder.increment(BRIDGE_METRICS.channelLoss, { provider, loss_class: known(LOSS_CLASSES, lossClass, 'stream_error') }),
      ),
    requestFinished: (transport, outcome, seconds) =>
      quietly(() =>
        recorder.observe(
          BRIDGE_METRICS.requestDuration,
          {
            provider,
            transport: known<Transport>(['duplex_v1', 'queue_v1'], transport, 'queue_v1'),
            outcome: known(REQUEST_OUTCOMES, outcome, 'lost'),
          },
          Number.isFinite(seconds) && seconds >= 0 ? seconds : 0,
        ),
      ),
  };
}

/** Telemetry that records nothing. */
export const noBridgeTelemetry: BridgeTelemetry = {
  channelOpened: () => undefined,
  channelFellBack: () => undefined,
  channelLost: () => undefined,
  requestFinished: () => undefined,
};

/** What the bridge logs: structured fields from closed sets, never a request's content. */
export interface BridgeLog {
  info(fields: Record<string, string | number | boolean>, message: string): void;
  warn(fields: Record<string, string | number | boolean>, message: string): void;
}

export const noBridgeLog: BridgeLog = { info: () => undefined, warn: () => undefined };
