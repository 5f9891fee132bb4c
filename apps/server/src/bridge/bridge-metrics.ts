import { BRIDGE_METRIC_LABELS, BRIDGE_METRICS, type BridgeMetricsRecorder, REQUEST_DURATION_BUCKETS } from '@sandcast/bridge';
import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * The bridge's metrics in the server's registry (`GET /metrics`), with the names and label sets
 * packages/bridge fixes; its telemetry has already reduced every label value to a closed set.
 */
export function createBridgeMetricsRecorder(registry: Registry): BridgeMetricsRecorder {
  const counter = (name: string, help: string) =>
    new Counter({ name, help, labelNames: [...BRIDGE_METRIC_LABELS[name as keyof typeof BRIDGE_METRIC_LABELS]], registers: [registry] });
  const counters = {
    [BRIDGE_METRICS.channelOpen]: counter(BRIDGE_METRICS.channelOpen, 'Duplex bridge channels that became ready.'),
    [BRIDGE_METRICS.channelFallback]: counter(BRIDGE_METRICS.channelFallback, 'Sandbox bridges that run on the file bridge, by reason.'),
    [BRIDGE_METRICS.channelLoss]: counter(BRIDGE_METRICS.channelLoss, 'Duplex bridge channels lost, by class.'),
  };
  const duration = new Histogram({
    name: BRIDGE_METRICS.requestDuration,
    help: 'Requests through the sandbox bridge, by transport and outcome.',
    labelNames: [...BRIDGE_METRIC_LABELS[BRIDGE_METRICS.requestDuration]],
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [registry],
  });
  return {
    increment: (name, labels) => counters[name].inc(labels),
    observe: (_name, labels, seconds) => duration.observe(labels, seconds),
  };
}
