export type { ProgressListener } from './base-images.ts';
export type { ClientOptions, JsonTransport } from './client.ts';
export { SandcastClient } from './client.ts';
export type { SandcastApiErrorCode } from './errors.ts';
export { SandcastApiError, SandcastConnectionError } from './errors.ts';
export type { ExecOutputListener } from './exec-stream.ts';
export { ExecStream, frameBytes } from './exec-stream.ts';
export type { OpenTerminalOptions, TerminalConnection, TerminalEvents, WebSocketLike } from './terminal.ts';
export { openTerminal, terminalSocketUrl } from './terminal.ts';
