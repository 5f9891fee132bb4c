export type { BrokerOptions, BrokerStats, ChannelEnd, CloseReason, DuplexBroker, FrameSink } from './broker.ts';
export { createDuplexBroker, HEARTBEAT_INTERVAL_MS, MAX_IN_FLIGHT, MISSED_HEARTBEATS } from './broker.ts';
export type { BridgeBudgets, BridgeConfigErrorCode } from './budgets.ts';
export { BRIDGE_CONFIG_ERROR_CODES, BridgeConfigError, checkBudgets, DEFAULT_BUDGETS } from './budgets.ts';
export type { Clock } from './clock.ts';
export { systemClock } from './clock.ts';
export { checkRequestObject, createFrameDecoder, encodeFrame, type FrameDecoder } from './codec.ts';
export type { ExecOutcome, FileBridge, FileBridgeIo, FileBridgeOptions, FileBridgeStats } from './file-bridge.ts';
export {
  DEFAULT_SPOOL_DIR,
  DEFAULT_WAIT_MS,
  MAX_QUEUED_REQUESTS,
  SPOOL_ID_PATTERN,
  spoolCommands,
  startFileBridge,
} from './file-bridge.ts';
export type { Forwarder, ForwardRequest, ForwardResponse } from './forward.ts';
export { SAFE_METHODS } from './forward.ts';
export type {
  BridgeRequest,
  BridgeResponse,
  DecodeErrorCode,
  DecodeResult,
  ErrorFrame,
  Frame,
  FrameHeaders,
  FrameType,
  HeartbeatFrame,
  ReadyFrame,
  RequestFrame,
  ResponseFrame,
} from './frames.ts';
export { DECODE_ERROR_CODES, FRAME_TYPES, FRAME_VERSION, MAX_FRAME_BYTES, MAX_ID_BYTES, MAX_PATH_BYTES } from './frames.ts';
export type { GateReason, Transport, TransportDecision } from './gate.ts';
export { decideTransport, TRANSPORTS } from './gate.ts';
export type { GatewayLimits } from './gateway.ts';
export {
  BRIDGE_ENV_PATH,
  bridgeUrl,
  duplexGatewayCommand,
  GATEWAY_EXIT_BIND_FAILED,
  GATEWAY_SANDBOX_PATH,
  GATEWAY_SOURCE,
  queueGatewayCommand,
} from './gateway.ts';
export type { HandshakeFailure, HandshakeOptions, HandshakeResult } from './handshake.ts';
export { awaitReady, createNonce, decodeStream, HANDSHAKE_FAILURES, MAX_PRE_READY_BYTES, READY_TIMEOUT_MS } from './handshake.ts';
export { MAX_LIFETIME_REQUESTS, MAX_RETAINED_ANSWER_BYTES } from './ledger.ts';
export type { PathRefusal, RouteAllowlist, RouteMatch, Upstream, UpstreamRefusal } from './policy.ts';
export {
  base64Bytes,
  bodyWithinLimit,
  compileRouteAllowlist,
  DEFAULT_REQUEST_HEADERS,
  filterRequestHeaders,
  MAX_BRIDGE_BODY_BYTES,
  normalizeBridgePath,
  resolveUpstream,
  sanitizeResponseHeaders,
  UPSTREAM_PREFIX,
} from './policy.ts';
export type { RefusalCode } from './refusals.ts';
export { REFUSAL_CODES, REFUSALS, refusal, refusalAnswer } from './refusals.ts';
export type {
  BridgeCounterName,
  BridgeHistogramName,
  BridgeLog,
  BridgeMetricsRecorder,
  BridgeTelemetry,
  FallbackReason,
  LossClass,
  ProviderLabel,
  RequestOutcome,
} from './telemetry.ts';
export {
  BRIDGE_METRIC_LABELS,
  BRIDGE_METRICS,
  createBridgeTelemetry,
  FALLBACK_REASONS,
  LOSS_CLASSES,
  noBridgeLog,
  noBridgeTelemetry,
  PROVIDER_LABELS,
  providerLabel,
  REQUEST_DURATION_BUCKETS,
  REQUEST_OUTCOMES,
} from './telemetry.ts';
