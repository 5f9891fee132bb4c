import { PassThrough } from 'node:stream';
import {
  awaitReady,
  type BridgeLog,
  type BridgeTelemetry,
  type Clock,
  createDuplexBroker,
  createNonce,
  type DuplexBroker,
  duplexGatewayCommand,
  type Forwarder,
  type HandshakeFailure,
} from '@sandcast/bridge';
import type { ExecChunk, ExecProcess, SandboxProvider } from '@sandcast/provider-sdk';

/** The longest a timer may be: the duplex gateway runs as long as its sandbox's bridge. */
const LONG_LIVED_MS = 2 ** 31 - 1;

/** Test hooks to force each handshake failure on a real gateway; never set in production. */
interface DuplexTestHooks {
  /** Rewrites the gateway's command line (a banner before it, a command that never answers). */
  command?: ((command: string[]) => string[]) | undefined;
  /** The nonce the gateway is started with, when it should differ from the one expected. */
  gatewayNonce?: ((nonce: string) => string) | undefined;
  /** Hands over a function that cuts the stream from the host's side (the channel is lost, the gateway sees it end). */
  onReady?: ((cut: () => void) => void) | undefined;
}

export interface DuplexOptions {
  readyTimeoutMs?: number | undefined;
  /** The clock of the wait for READY (tests move it past the budget instead of waiting it out). */
  readyClock?: Clock | undefined;
  heartbeatIntervalMs?: number | undefined;
  hooks?: DuplexTestHooks | undefined;
}

export type OpenedDuplex =
  | { ok: true; broker: DuplexBroker; process: ExecProcess; endInput: () => void }
  | { ok: false; reason: HandshakeFailure };

/** The command's stdout as bytes (its stderr is read and dropped, so it never blocks the gateway). */
async function* stdoutOf(process: ExecProcess): AsyncGenerator<Uint8Array> {
  for await (const chunk of process.output as AsyncIterable<ExecChunk>) if (chunk.stream === 'stdout') yield chunk.data;
}

/**
 * Starts the duplex gateway as one long-lived provider command whose stdin the host writes,
 * waits for its READY, and runs the broker on the stream. Every failure before READY (the stream
 * would not open, the port was taken, a wrong or malformed READY, noise, silence) kills the command
 * and names the reason; no request has been read by then.
 */
export async function openDuplexChannel(options: {
  provider: SandboxProvider;
  instanceId: string;
  port: number;
  forward: Forwarder;
  telemetry: BridgeTelemetry;
  log: BridgeLog;
  duplex: DuplexOptions;
}): Promise<OpenedDuplex> {
  const { hooks } = options.duplex;
  const nonce = createNonce();
  const command = duplexGatewayCommand({
    port: options.port,
    nonce: hooks?.gatewayNonce ? hooks.gatewayNonce(nonce) : nonce,
    ...(options.duplex.heartbeatIntervalMs ? { heartbeatMs: options.duplex.heartbeatIntervalMs } : {}),
  });
  const stdin = new PassThrough();
  let process: ExecProcess;
  try {
    process = await options.provider.execStream(options.instanceId, {
      command: hooks?.command ? hooks.command(command) : command,
      stdinStream: stdin,
      timeoutMs: LONG_LIVED_MS,
    });
  } catch {
    return { ok: false, reason: 'channel_open_failed' };
  }
  const handshake = await awaitReady({
    input: stdoutOf(process),
    nonce,
    ...(options.duplex.readyTimeoutMs ? { timeoutMs: options.duplex.readyTimeoutMs } : {}),
    ...(options.duplex.readyClock ? { clock: options.duplex.readyClock } : {}),
  });
  if (!handshake.ready) {
    stdin.end();
    await process.kill().catch(() => undefined);
    return { ok: false, reason: handshake.reason };
  }
  const broker = createDuplexBroker({
    frames: handshake.frames,
    sink: {
      write: (line) => {
        if (stdin.writableEnded || stdin.destroyed) throw new Error('the gateway stream is closed');
        return stdin.write(line);
      },
      end: () => stdin.end(),
      drained: () => new Promise<void>((resolve) => stdin.once('drain', resolve)),
    },
    forward: options.forward,
    telemetry: options.telemetry,
    log: options.log,
    ...(options.duplex.heartbeatIntervalMs ? { heartbeatIntervalMs: options.duplex.heartbeatIntervalMs } : {}),
  });
  // Ending the gateway's stdin is the end of the channel for it: it answers what it holds and exits.
  const endInput = () => {
    if (!stdin.writableEnded) stdin.end();
  };
  hooks?.onReady?.(endInput);
  return { ok: true, broker, process, endInput };
}
