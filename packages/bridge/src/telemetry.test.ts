import { describe, expect, it } from 'vitest';
import {
  BRIDGE_METRIC_LABELS,
  type BridgeMetricsRecorder,
  createBridgeTelemetry,
  type FallbackReason,
  type LossClass,
  PROVIDER_LABELS,
  providerLabel,
  type RequestOutcome,
} from './telemetry.ts';

function memoryRecorder() {
  const calls: { name: string; labels: Readonly<Record<string, string>>; seconds?: number }[] = [];
  const recorder: BridgeMetricsRecorder = {
    increment: (name, labels) => calls.push({ name, labels }),
    observe: (name, labels, seconds) => calls.push({ name, labels, seconds }),
  };
  return { recorder, calls };
}

describe('bridge telemetry', () => {
  it('labels providers from the allowlist and everything else as other', () => {
    expect(PROVIDER_LABELS.map(providerLabel)).toEqual([...PROVIDER_LABELS]);
    expect(providerLabel('e2b')).toBe('other');
    expect(providerLabel('Docker')).toBe('other');
    expect(providerLabel(undefined)).toBe('other');
  });

  it('records each metric with exactly its label names, values from the closed sets', () => {
    const { recorder, calls } = memoryRecorder();
    const t = createBridgeTelemetry(recorder, { provider: 'docker' });
    t.channelOpened();
    t.channelFellBack('contaminated');
    t.channelLost('write_failed');
    t.requestFinished('queue_v1', 'indeterminate', 1.5);
    expect(calls).toEqual([
      { name: 'sandbox_duplex_channel_open_total', labels: { provider: 'docker' } },
      { name: 'sandbox_duplex_channel_fallback_total', labels: { provider: 'docker', fallback_reason: 'contaminated' } },
      { name: 'sandbox_duplex_channel_loss_total', labels: { provider: 'docker', loss_class: 'write_failed' } },
      {
        name: 'sandbox_bridge_request_duration_seconds',
        labels: { provider: 'docker', transport: 'queue_v1', outcome: 'indeterminate' },
        seconds: 1.5,
      },
    ]);
    for (const call of calls)
      expect(Object.keys(call.labels)).toEqual(BRIDGE_METRIC_LABELS[call.name as keyof typeof BRIDGE_METRIC_LABELS]);
  });

  it('replaces a value outside its set, whatever a caller casts, and a bad duration', () => {
    const { recorder, calls } = memoryRecorder();
    const t = createBridgeTelemetry(recorder, { provider: 'fake' });
    t.channelFellBack('/api/secret' as FallbackReason);
    t.channelLost('token' as LossClass);
    t.requestFinished('carrier-pigeon' as 'queue_v1', 'GET /x' as RequestOutcome, Number.NaN);
    expect(calls.map((c) => c.labels)).toEqual([
      { provider: 'fake', fallback_reason: 'channel_open_failed' },
      { provider: 'fake', loss_class: 'stream_error' },
      { provider: 'fake', transport: 'queue_v1', outcome: 'lost' },
    ]);
    expect(calls[2]?.seconds).toBe(0);
  });

  it('never lets a failing recorder fail the bridge', () => {
    const t = createBridgeTelemetry(
      {
        increment: () => {
          throw new Error('registry broke');
        },
        observe: () => {
          throw new Error('registry broke');
        },
      },
      { provider: 'local' },
    );
    expect(() => {
      t.channelOpened();
      t.requestFinished('duplex_v1', 'ok', 0);
    }).not.toThrow();
  });
});
