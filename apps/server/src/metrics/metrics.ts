import type { BridgeMetricsRecorder } from '@sandcast/bridge';
import { SANDBOX_STATUSES, SETUP_SESSION_STATUSES } from '@sandcast/core';
import type { Store } from '@sandcast/db';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { createBridgeMetricsRecorder } from './bridge-metrics.ts';

/**
 * Every metric Sandcast exports (docs/spec/http-api.md, "Metrics"). Labels take values from closed
 * sets only — route templates, methods, status classes, provider ids, operation names, statuses,
 * error codes — never a URL, an id, a name or a secret, so the series count stays bounded.
 */
export interface Metrics {
  registry: Registry;
  httpRequestDuration: Histogram<'method' | 'route' | 'status_class'>;
  providerCallDuration: Histogram<'provider' | 'operation'>;
  providerCallErrors: Counter<'provider' | 'operation' | 'code'>;
  reconcilerPasses: Counter<'outcome'>;
  reconcilerPassDuration: Histogram;
  /** The host↔sandbox bridge's counters and histogram; hand it to `createBridgeTelemetry`. */
  bridge: BridgeMetricsRecorder;
  egressDecisions: Counter<'decision' | 'reason'>;
  egressBytes: Counter<'direction'>;
}

/** Fills every status of a closed tuple, zero where the database has none. */
function setByStatus(gauge: Gauge<'status'>, statuses: readonly string[], counts: Map<string, number>): void {
  for (const status of statuses) gauge.set({ status }, counts.get(status) ?? 0);
}

let processRegistry: Registry | undefined;

/** The Node.js process metrics, collected once per process however many servers it runs. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * A registry of its own per server (several servers share a process in tests), merged with the
 * process metrics for the scrape. The database gauges are read on scrape: one grouped count per
 * table.
 */
export function createMetrics(deps: { store: Store }): Metrics {
  const registry = new Registry();
  new Gauge({
    name: 'sandcast_sandboxes',
    help: 'Sandboxes by observed status.',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      setByStatus(this, SANDBOX_STATUSES, await deps.store.repos.statusCounts.sandboxes());
    },
  });
  new Gauge({
    name: 'sandcast_setup_sessions',
    help: 'Custom image setup sessions by status.',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      setByStatus(this, SETUP_SESSION_STATUSES, await deps.store.repos.statusCounts.setupSessions());
    },
  });
  const metrics = {
    httpRequestDuration: new Histogram({
      name: 'sandcast_http_request_duration_seconds',
      help: 'HTTP request duration by route template, method and status class.',
      labelNames: ['method', 'route', 'status_class'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    providerCallDuration: new Histogram({
      name: 'sandcast_provider_call_duration_seconds',
      help: 'Duration of provider operations, whether they succeeded or failed.',
      labelNames: ['provider', 'operation'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    providerCallErrors: new Counter({
      name: 'sandcast_provider_call_errors_total',
      help: 'Provider operations that threw, by ProviderError code (other for anything else).',
      labelNames: ['provider', 'operation', 'code'] as const,
      registers: [registry],
    }),
    reconcilerPasses: new Counter({
      name: 'sandcast_reconciler_passes_total',
      help: 'Reconciler passes by outcome (ok, failed).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    reconcilerPassDuration: new Histogram({
      name: 'sandcast_reconciler_pass_duration_seconds',
      help: 'Duration of reconciler passes.',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    bridge: createBridgeMetricsRecorder(registry),
    egressDecisions: new Counter({
      name: 'sandcast_egress_decisions_total',
      help: 'Egress proxy decisions by outcome (allowed, denied) and reason (a closed set).',
      labelNames: ['decision', 'reason'] as const,
      registers: [registry],
    }),
    egressBytes: new Counter({
      name: 'sandcast_egress_bytes_total',
      help: 'Bytes through the egress proxy: out (from sandboxes) and in (to sandboxes).',
      labelNames: ['direction'] as const,
      registers: [registry],
    }),
  };
  return { registry: Registry.merge([processMetrics(), registry]), ...metrics };
}
