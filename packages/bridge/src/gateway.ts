import { fileURLToPath } from 'node:url';
import { DEFAULT_SPOOL_DIR } from './file-bridge.ts';

/*
 * The in-sandbox gateway (native/sandcast-gateway.c) as the host starts it: where it lives inside
 * a sandbox and the command lines of its modes. Building it is the host's business (provider-sdk's
 * `staticBinary(GATEWAY_SOURCE)`); getting it into a sandbox is the server's (writeFile + exec).
 */

/** The gateway's C source; `staticBinary` builds it once per source change. */
export const GATEWAY_SOURCE = fileURLToPath(new URL('../native/sandcast-gateway.c', import.meta.url));

/** Where the host copies the gateway inside a sandbox (outside the workspace, so never exported). */
export const GATEWAY_SANDBOX_PATH = '/run/sandcast/bin/sandcast-gateway';

/** The file with `SANDCAST_BRIDGE_URL` and `SANDCAST_BRIDGE_TOKEN` for processes the host did not start. */
export const BRIDGE_ENV_PATH = '/run/sandcast/bridge.env';

/** The gateway's exit when it cannot listen on the port (duplex mode also prints a `bind_failed` frame). */
export const GATEWAY_EXIT_BIND_FAILED = 3;

export interface GatewayLimits {
  /** The largest request body accepted inside the sandbox (413 above it). Default 1 MiB. */
  maxBodyBytes?: number | undefined;
  /** Concurrent connections inside the sandbox (503 above it). Default 64. */
  maxConnections?: number | undefined;
  /** How long a request waits for the host before the gateway answers 504. Default 35 s. */
  waitMs?: number | undefined;
  /** Heartbeat interval (duplex); silence for three of them is a lost channel. Default 5 s. */
  heartbeatMs?: number | undefined;
  /** Pending spool requests (queue); 503 above it. Default 64. */
  maxDepth?: number | undefined;
}

function limitArgs(limits: GatewayLimits): string[] {
  const args: string[] = [];
  const add = (flag: string, value: number | undefined) => {
    if (value !== undefined) args.push(flag, String(Math.trunc(value)));
  };
  add('--max-body', limits.maxBodyBytes);
  add('--max-conns', limits.maxConnections);
  add('--wait-ms', limits.waitMs);
  add('--heartbeat-ms', limits.heartbeatMs);
  add('--max-depth', limits.maxDepth);
  return args;
}

/** The long-lived duplex gateway: frames on its stdout, responses on its stdin. */
export function duplexGatewayCommand(options: { port: number; nonce: string; binary?: string } & GatewayLimits): string[] {
  const { port, nonce, binary = GATEWAY_SANDBOX_PATH, ...limits } = options;
  return [binary, 'duplex', '--port', String(port), '--nonce', nonce, ...limitArgs(limits)];
}

/** Starts the queue gateway in the background; the command exits 0 once it listens, 3 when the port is taken. */
export function queueGatewayCommand(options: { port: number; spool?: string; binary?: string } & GatewayLimits): string[] {
  const { port, spool = DEFAULT_SPOOL_DIR, binary = GATEWAY_SANDBOX_PATH, ...limits } = options;
  return [binary, 'queue', '--port', String(port), '--spool', spool, '--daemon', ...limitArgs(limits)];
}

/** `SANDCAST_BRIDGE_URL` for a gateway on `port`. */
export function bridgeUrl(port: number): string {
  return `http://127.0.0.1:${port}`;
}
