export { checkRequestObject, createFrameDecoder, encodeFrame, type FrameDecoder } from './codec.ts';
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
export type { GatewayLimits } from './gateway.ts';
export {
  BRIDGE_ENV_PATH,
  bridgeUrl,
  DEFAULT_SPOOL_DIR,
  duplexGatewayCommand,
  GATEWAY_EXIT_BIND_FAILED,
  GATEWAY_SANDBOX_PATH,
  GATEWAY_SOURCE,
  queueGatewayCommand,
  queueRespondCommand,
  queueWaitCommand,
} from './gateway.ts';
