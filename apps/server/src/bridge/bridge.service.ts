import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  BRIDGE_ENV_PATH,
  type BridgeLog,
  type BridgeMetricsRecorder,
  bridgeUrl,
  type ChannelEnd,
  createBridgeTelemetry,
  DEFAULT_SPOOL_DIR,
  type DuplexBroker,
  decideTransport,
  type FallbackReason,
  type FileBridge,
  GATEWAY_EXIT_BIND_FAILED,
  GATEWAY_SANDBOX_PATH,
  GATEWAY_SOURCE,
  queueGatewayCommand,
  startFileBridge,
  type Transport,
} from '@sandcast/bridge';
import type { InstanceSettings, Principal } from '@sandcast/core';
import { type ExecProcess, type SandboxProvider, staticBinary } from '@sandcast/provider-sdk';
import type { FastifyBaseLogger } from 'fastify';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { type DuplexOptions, openDuplexChannel } from './bridge-duplex.ts';
import { createBridgeForwarder, type Inject, type ResolvedUpstream } from './bridge-forwarder.ts';
import { createBridgeTickets, createBridgeTokens } from './bridge-tokens.ts';

/** Where a sandbox's bridge stands: the transport it runs on and why (a fallback names its reason). */
export interface BridgeStatus {
  transport: Transport;
  /** Why the file bridge: a gate or handshake reason, or the duplex channel that was lost. */
  fallbackReason: FallbackReason | 'channel_lost' | null;
  url: string;
}

interface Running {
  sandboxId: string;
  provider: SandboxProvider;
  providerId: string;
  instanceId: string;
  port: number;
  token: string;
  status: BridgeStatus;
  duplex: { broker: DuplexBroker; process: ExecProcess; endInput: () => void } | null;
  file: FileBridge | null;
  forward: ReturnType<typeof createBridgeForwarder>;
  telemetry: ReturnType<typeof createBridgeTelemetry>;
  stopped: boolean;
}

export interface BridgeTarget {
  sandboxId: string;
  sessionId: string;
  principal: Principal;
  providerId: string;
  instanceId: string;
}

export interface BridgeServiceOptions {
  duplex?: DuplexOptions | undefined;
  /** How long one file-bridge `wait` blocks in the sandbox (default packages/bridge's 25 s). */
  fileWaitMs?: number | undefined;
  /** Picks the in-sandbox port (tests pre-bind it); default a random port in 20000–59999. */
  pickPort?: (() => number) | undefined;
}

const QUEUE_BIND_ATTEMPTS = 3;

/**
 * The host bridge of every bridged sandbox (ARCHITECTURE §8): copies the gateway in, decides the
 * transport with the gate (the `enableSandboxDuplexBridge` setting AND the provider's
 * `duplexCommandStream`), runs the duplex handshake and falls back to the file bridge for every
 * reason before a request is sent, issues the sandbox's bridge token, and forwards what comes out
 * through the allowlisted forwarder. Turning the setting off closes open duplex channels: their
 * requests in flight are answered (unsafe 504 `indeterminate`, safe 503 `bridge_closed`) and the
 * sandbox goes on over the file bridge on the same URL (docs/decisions/0024-bridge-kill-switch-and-indeterminate-outcomes.md).
 */
/** Ends the sandbox's background file gateway, if one runs (its pid is in the spool); never throws. */
async function stopFileGateway(provider: SandboxProvider, instanceId: string): Promise<void> {
  await provider
    .exec(instanceId, { command: ['/bin/sh', '-c', `kill "$(cat ${DEFAULT_SPOOL_DIR}/gateway.pid)" 2>/dev/null; true`], timeoutMs: 5000 })
    .catch(() => undefined);
}

export function createBridgeService(deps: {
  providers: ProviderRegistry;
  settings: { get(): Promise<InstanceSettings> };
  inject: Inject;
  upstreams: () => Promise<ResolvedUpstream[]>;
  log: FastifyBaseLogger;
  recorder: BridgeMetricsRecorder;
  options?: BridgeServiceOptions | undefined;
}) {
  const tokens = createBridgeTokens();
  const tickets = createBridgeTickets();
  const running = new Map<string, Running>();
  const starting = new Map<string, Promise<BridgeStatus>>();
  const options = deps.options ?? {};
  const pickPort = options.pickPort ?? (() => randomInt(20_000, 60_000));
  const log: BridgeLog = {
    info: (fields, message) => deps.log.info(fields, message),
    warn: (fields, message) => deps.log.warn(fields, message),
  };
  let gateway: Promise<Buffer> | null = null;
  const gatewayBytes = () => {
    gateway ??= staticBinary(GATEWAY_SOURCE, 'sandcast-gateway').then((path) => readFile(path));
    gateway.catch(() => {
      gateway = null;
    });
    return gateway;
  };

  /** The file bridge on `run`'s port (a new one when something inside holds it). */
  const startFile = async (run: Running, reason: NonNullable<BridgeStatus['fallbackReason']>) => {
    const exec = async (command: string[], opts: { timeoutMs: number }) => {
      const result = await run.provider.exec(run.instanceId, { command, timeoutMs: opts.timeoutMs });
      return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
    };
    for (let attempt = 0; ; attempt++) {
      const started = await exec(queueGatewayCommand({ port: run.port }), { timeoutMs: 15_000 });
      if (started.exitCode === 0) break;
      if (started.exitCode !== GATEWAY_EXIT_BIND_FAILED || attempt + 1 >= QUEUE_BIND_ATTEMPTS) {
        throw new Error(`the bridge gateway did not start in the sandbox (exit ${started.exitCode})`);
      }
      run.port = pickPort();
    }
    run.file = startFileBridge({
      exec,
      readFile: (path) => run.provider.readFile(run.instanceId, path),
      writeFile: (path, data) => run.provider.writeFile(run.instanceId, path, Buffer.from(data), { mode: 0o600 }),
      forward: run.forward,
      gatewayCommand: [GATEWAY_SANDBOX_PATH],
      telemetry: run.telemetry,
      log,
      ...(options.fileWaitMs ? { waitMs: options.fileWaitMs, minWaitMs: Math.min(1000, options.fileWaitMs / 2) } : {}),
    });
    run.status = { transport: 'queue_v1', fallbackReason: reason, url: bridgeUrl(run.port) };
  };

  const writeEnv = (run: Running) =>
    run.provider.writeFile(
      run.instanceId,
      BRIDGE_ENV_PATH,
      Buffer.from(`SANDCAST_BRIDGE_URL=${run.status.url}\nSANDCAST_BRIDGE_TOKEN=${run.token}\n`),
      { mode: 0o600 },
    );

  /** A duplex channel ended (lost, or closed by the kill switch): the sandbox goes on over the file bridge. */
  const afterDuplex = async (run: Running, end: ChannelEnd) => {
    const duplex = run.duplex;
    if (!duplex) return;
    run.duplex = null;
    // The gateway exits once its stdin ends (answering what it still holds); the port is free after that.
    duplex.endInput();
    // An exit that rejects (the sandbox went away under the stream) is an exit too.
    const ended = duplex.process.exit.then(
      () => true,
      () => true,
    );
    const exited = await Promise.race([ended, new Promise((r) => setTimeout(() => r(false), 2000))]);
    if (!exited) await duplex.process.kill().catch(() => undefined);
    if (run.stopped) return;
    try {
      const before = run.port;
      await startFile(run, end.kind === 'lost' ? 'channel_lost' : 'gate_off');
      if (run.port !== before) await writeEnv(run);
    } catch (error) {
      deps.log.warn({ err: error, sandboxId: run.sandboxId }, 'the bridge could not fall back to the file bridge');
    }
  };

  const start = async (target: BridgeTarget): Promise<BridgeStatus> => {
    const registered = deps.providers.get(target.providerId);
    if (!registered) throw new Error(`provider ${target.providerId} is not registered`);
    const provider = registered.provider;
    // Written beside and renamed over: a gateway still running from the file (a restart) keeps its copy.
    const staged = `${GATEWAY_SANDBOX_PATH}.${randomInt(1e9)}`;
    await provider.writeFile(target.instanceId, staged, await gatewayBytes(), { mode: 0o755 });
    const moved = await provider.exec(target.instanceId, { command: ['mv', '-f', staged, GATEWAY_SANDBOX_PATH], timeoutMs: 15_000 });
    if (moved.exitCode !== 0) throw new Error(`the bridge gateway could not be installed: ${moved.stderr.trim()}`);
    // A file gateway a previous server process left running (its token died with that process) goes first.
    await stopFileGateway(provider, target.instanceId);
    const token = tokens.issue({ sandboxId: target.sandboxId, sessionId: target.sessionId, principal: target.principal });
    const binding = { sandboxId: target.sandboxId, sessionId: target.sessionId, principal: target.principal };
    const run: Running = {
      sandboxId: target.sandboxId,
      provider,
      providerId: target.providerId,
      instanceId: target.instanceId,
      port: pickPort(),
      token,
      status: { transport: 'queue_v1', fallbackReason: null, url: '' },
      duplex: null,
      file: null,
      forward: createBridgeForwarder({ binding, tokens, tickets, inject: deps.inject, upstreams: deps.upstreams }),
      telemetry: createBridgeTelemetry(deps.recorder, { provider: target.providerId }),
      stopped: false,
    };
    const settings = await deps.settings.get();
    const decision = decideTransport({
      settingEnabled: settings.experimental.enableSandboxDuplexBridge,
      capability: provider.capabilities.duplexCommandStream,
    });
    let reason: FallbackReason | null = decision.transport === 'queue_v1' ? decision.reason : null;
    if (decision.transport === 'duplex_v1') {
      const opened = await openDuplexChannel({
        provider,
        instanceId: target.instanceId,
        port: run.port,
        forward: run.forward,
        telemetry: run.telemetry,
        log,
        duplex: options.duplex ?? {},
      });
      if (opened.ok) {
        run.duplex = { broker: opened.broker, process: opened.process, endInput: opened.endInput };
        run.status = { transport: 'duplex_v1', fallbackReason: null, url: bridgeUrl(run.port) };
        run.telemetry.channelOpened();
        void opened.broker.ended
          .then((end) => afterDuplex(run, end))
          .catch((error: unknown) =>
            deps.log.warn({ err: error, sandboxId: run.sandboxId }, 'the bridge could not fall back to the file bridge'),
          );
      } else {
        reason = opened.reason;
        // A taken port stays taken: the file bridge gets another one.
        if (reason === 'channel_open_failed') run.port = pickPort();
      }
    }
    if (reason !== null) {
      run.telemetry.channelFellBack(reason);
      await startFile(run, reason);
    }
    running.set(target.sandboxId, run);
    await writeEnv(run);
    log.info({ event: 'bridge_started', transport: run.status.transport }, 'sandbox bridge started');
    return run.status;
  };

  const stop = async (sandboxId: string): Promise<void> => {
    await starting.get(sandboxId)?.catch(() => undefined);
    tokens.revoke(sandboxId);
    const run = running.get(sandboxId);
    if (!run) return;
    running.delete(sandboxId);
    run.stopped = true;
    if (run.duplex) {
      run.duplex.broker.close('teardown');
      await run.duplex.process.kill().catch(() => undefined);
    }
    await run.file?.stop();
    // The file bridge's gateway runs in the background; a sandbox that is going away takes it along.
    await stopFileGateway(run.provider, run.instanceId);
  };

  /** Who each bridged sandbox's bridge speaks for, kept across a stop so a start or a recovery can bring it back. */
  const targets = new Map<string, BridgeTarget>();

  const begin = async (target: BridgeTarget): Promise<BridgeStatus | null> => {
    if (deps.providers.get(target.providerId)?.provider.capabilities.bridgeGateway !== true) return null;
    targets.set(target.sandboxId, target);
    const pending = (async () => {
      await stop(target.sandboxId);
      return start(target);
    })();
    starting.set(target.sandboxId, pending);
    void pending
      .finally(() => {
        if (starting.get(target.sandboxId) === pending) starting.delete(target.sandboxId);
      })
      .catch(() => undefined);
    return pending;
  };

  return {
    tickets,
    /**
     * Starts (or restarts) the bridge of a sandbox; resolves once requests can flow. Null where the
     * provider cannot run the gateway (capability `bridgeGateway`): the sandbox has no bridge.
     */
    start: begin,
    /**
     * The sandbox runs on `instanceId` now (started again, or recovered onto new compute): a bridge
     * it had comes back there, for the same session and principal. Null when it never had one.
     */
    resume(sandboxId: string, instanceId: string): Promise<BridgeStatus | null> | null {
      const target = targets.get(sandboxId);
      return target ? begin({ ...target, instanceId }) : null;
    },
    /** The sandbox is gone for good: its bridge stops and is not brought back. */
    async forget(sandboxId: string): Promise<void> {
      targets.delete(sandboxId);
      await stop(sandboxId);
    },
    stop,
    status: (sandboxId: string): BridgeStatus | null => running.get(sandboxId)?.status ?? null,
    /** `SANDCAST_BRIDGE_URL` and `SANDCAST_BRIDGE_TOKEN` for a command the host runs in the sandbox. */
    async env(sandboxId: string): Promise<Record<string, string>> {
      await starting.get(sandboxId)?.catch(() => undefined);
      const run = running.get(sandboxId);
      return run ? { SANDCAST_BRIDGE_URL: run.status.url, SANDCAST_BRIDGE_TOKEN: run.token } : {};
    },
    /** The kill switch: with the setting off, every open duplex channel closes and falls back. */
    applySettings(settings: InstanceSettings): void {
      if (settings.experimental.enableSandboxDuplexBridge === true) return;
      for (const run of running.values()) run.duplex?.broker.close('kill_switch');
    },
    async closeAll(): Promise<void> {
      // A start still under way (a resume after a restart) finishes first, so nothing outlives the close.
      await Promise.allSettled([...starting.values()]);
      await Promise.all([...running.keys()].map((id) => stop(id)));
    },
  };
}
