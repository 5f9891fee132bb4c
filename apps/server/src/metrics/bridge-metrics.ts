import {
  BRIDGE_METRIC_LABELS,
  BRIDGE_METRICS,
  type BridgeCounterName,
  type BridgeHistogramName,
  type BridgeMetricsRecorder,
  REQUEST_DURATION_BUCKETS,
} from '@sandcast/bridge';
import { Counter, Histogram, type Registry } from 'prom-client';

const HELP: Record<BridgeCounterName | BridgeHistogramName, string> = {
  [BRIDGE_METRICS.channelOpen]: 'Duplex bridge channels that became ready, by provider.',
  [BRIDGE_METRICS.channelFallback]: 'Sandboxes whose bridge runs on the file bridge instead of duplex, by provider and reason.',
  [BRIDGE_METRICS.channelLoss]: 'Duplex bridge channels lost (never reopened), by provider and loss class.',
  [BRIDGE_METRICS.requestDuration]: 'Bridged requests from sandboxes, by provider, transport and outcome.',
};

/** Only the metric's own label names, each with a value (the bridge has already closed the sets). */
function pick(names: readonly string[], labels: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) out[name] = labels[name] ?? 'other';
  return out;
}

/** The bridge's metrics (packages/bridge, telemetry.ts) on a prom-client registry. */
export function createBridgeMetricsRecorder(registry: Registry): BridgeMetricsRecorder {
  const counter = (name: BridgeCounterName) =>
    new Counter({ name, help: HELP[name], labelNames: BRIDGE_METRIC_LABELS[name], registers: [registry] });
  const counters: Record<BridgeCounterName, Counter<string>> = {
    [BRIDGE_METRICS.channelOpen]: counter(BRIDGE_METRICS.channelOpen),
    [BRIDGE_METRICS.channelFallback]: counter(BRIDGE_METRICS.channelFallback),
    [BRIDGE_METRICS.channelLoss]: counter(BRIDGE_METRICS.channelLoss),
  };
  const duration = new Histogram({
    name: BRIDGE_METRICS.requestDuration,
    help: HELP[BRIDGE_METRICS.requestDuration],
    labelNames: BRIDGE_METRIC_LABELS[BRIDGE_METRICS.requestDuration],
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [registry],
  });
  return {
    increment(name, labels) {
      counters[name].inc(pick(BRIDGE_METRIC_LABELS[name], labels));
    },
    observe(name, labels, seconds) {
      if (name === BRIDGE_METRICS.requestDuration) duration.observe(pick(BRIDGE_METRIC_LABELS[name], labels), seconds);
    },
  };
}
