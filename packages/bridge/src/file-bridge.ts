import { type BridgeBudgets, checkBudgets, checkPositiveInteger, DEFAULT_BUDGETS } from './budgets.ts';
import { type Clock, systemClock } from './clock.ts';
import { checkRequestObject } from './codec.ts';
import { type Forwarder, runForward } from './forward.ts';
import { type BridgeResponse, MAX_FRAME_BYTES } from './frames.ts';
import { MAX_LIFETIME_REQUESTS, RequestLedger } from './ledger.ts';
import { bodyWithinLimit, MAX_BRIDGE_BODY_BYTES } from './policy.ts';
import { type RefusalCode, refusal } from './refusals.ts';
import { type BridgeLog, type BridgeTelemetry, noBridgeLog, noBridgeTelemetry, type RequestOutcome } from './telemetry.ts';

/*
 * The host side of the file bridge (`queue_v1`, docs/spec/bridge-frames.md): claims requests from
 * the sandbox's spool with the gateway's blocking `wait`, forwards each once, and answers through
 * `res/.<id>.tmp` plus the gateway's `commit`. Provider failures back off; nothing here kills the
 * bridge but `stop()`.
 */

export const DEFAULT_SPOOL_DIR = '/run/sandcast-bridge';
/** How long one `wait` blocks inside the sandbox. */
export const DEFAULT_WAIT_MS = 25_000;
/** The most requests claimed and not yet answered. */
export const MAX_QUEUED_REQUESTS = 64;
/** How long stop() waits for answers being written. */
const STOP_GRACE_MS = 5_000;
/** A request id as a file name: no dot first, no separator. */
export const SPOOL_ID_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export interface ExecOutcome {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The provider's exec, file read and file write into the sandbox, bound to it. */
export interface FileBridgeIo {
  exec(command: string[], options: { timeoutMs: number }): Promise<ExecOutcome>;
  readFile(path: string): Promise<Uint8Array>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
}

export interface FileBridgeOptions extends FileBridgeIo {
  forward: Forwarder;
  /** How to run the gateway inside the sandbox, e.g. `['/opt/sandcast/sandcast-bridge']`. */
  gatewayCommand: readonly string[];
  spoolDir?: string;
  waitMs?: number;
  /** A `wait` that comes back empty sooner than this counts as a failure (no busy loop). */
  minWaitMs?: number;
  maxQueued?: number;
  maxBodyBytes?: number;
  maxLifetimeRequests?: number;
  budgets?: BridgeBudgets;
  backoff?: { initialMs: number; maxMs: number };
  clock?: Clock;
  telemetry?: BridgeTelemetry;
  log?: BridgeLog;
}

export interface FileBridgeStats {
  inFlight: number;
  lifetimeIds: number;
  consecutiveFailures: number;
  waits: number;
}

export interface FileBridge {
  /** Stops claiming; answers what is in flight (unsafe 504 `indeterminate`, safe 503 `bridge_closed`), then resolves. */
  stop(): Promise<void>;
  stats(): FileBridgeStats;
}

/** The gateway command lines the host runs; the C gateway implements the same. */
export function spoolCommands(gateway: readonly string[], spoolDir: string) {
  return {
    wait: (max: number, waitMs: number) => [...gateway, 'wait', '--spool', spoolDir, '--max', String(max), '--wait-ms', String(waitMs)],
    commit: (ids: readonly string[]) => [...gateway, 'commit', '--spool', spoolDir, '--', ...ids],
  };
}

export function startFileBridge(options: FileBridgeOptions): FileBridge {
  const budgets = checkBudgets(options.budgets ?? DEFAULT_BUDGETS);
  const maxQueued = checkPositiveInteger('maxQueued', options.maxQueued ?? MAX_QUEUED_REQUESTS);
  const waitMs = checkPositiveInteger('waitMs', options.waitMs ?? DEFAULT_WAIT_MS);
  const minWaitMs = options.minWaitMs ?? 1_000;
  const maxBody = checkPositiveInteger('maxBodyBytes', options.maxBodyBytes ?? MAX_BRIDGE_BODY_BYTES);
  const backoff = options.backoff ?? { initialMs: 250, maxMs: 10_000 };
  const spool = options.spoolDir ?? DEFAULT_SPOOL_DIR;
  const clock = options.clock ?? systemClock;
  const telemetry = options.telemetry ?? noBridgeTelemetry;
  const log = options.log ?? noBridgeLog;
  const commands = spoolCommands(options.gatewayCommand, spool);
  const ledger = new RequestLedger({
    maxIds: checkPositiveInteger('maxLifetimeRequests', options.maxLifetimeRequests ?? MAX_LIFETIME_REQUESTS),
  });
  const inFlight = new Map<string, { cancel: () => void }>();
  const toCommit: string[] = [];
  const writes = new Set<Promise<void>>();
  let committing = false;
  let stopping = false;
  let failures = 0;
  let waits = 0;
  let active = 0;
  const sleepers = new Set<() => void>();
  let slotFreed: (() => void) | undefined;

  /** Resolves after `ms`, or at once on stop(). */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clock.clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      };
      const timer = clock.setTimeout(done, ms);
      sleepers.add(done);
    });

  let stopSignal: () => void = () => undefined;
  const stopped = new Promise<'stopped'>((resolve) => {
    stopSignal = () => resolve('stopped');
  });

  const failed = async (what: string) => {
    failures++;
    const delay = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(failures - 1, 30));
    log.warn({ event: 'file_bridge_backoff', step: what, failures, delayMs: delay }, 'file bridge: provider call failed; backing off');
    await sleep(delay);
  };

  const commit = async () => {
    if (committing) return;
    committing = true;
    try {
      while (toCommit.length > 0) {
        const ids = toCommit.splice(0, 64);
        try {
          const result = await options.exec(commands.commit(ids), { timeoutMs: 10_000 });
          if (result.exitCode !== 0) throw new Error('commit failed');
        } catch {
          if (stopping) return;
          toCommit.unshift(...ids);
          await failed('commit');
        }
      }
    } finally {
      committing = false;
    }
  };

  /** Writes an answer for the gateway to pick up; a lost write leaves the gateway to time out. */
  const deliver = (response: BridgeResponse) => {
    const write = (async () => {
      const { id, status, headers, body } = response;
      const data = Buffer.from(`${JSON.stringify({ id, status, headers, body })}\n`);
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          await options.writeFile(`${spool}/res/.${id}.tmp`, data);
          toCommit.push(id);
          void commit();
          return;
        } catch {
          if (stopping) return;
          await failed('write');
        }
      }
    })();
    writes.add(write);
    void write.finally(() => writes.delete(write));
  };

  const answerRefusal = (id: string, code: RefusalCode, started: number) => {
    deliver(refusal(id, code));
    telemetry.requestFinished('queue_v1', code, Math.max(0, clock.now() - started) / 1000);
  };

  const handlers = new Set<Promise<void>>();
  const handle = (id: string) => {
    active++;
    const handler = handleClaimed(id).finally(() => {
      active--;
      handlers.delete(handler);
      slotFreed?.();
    });
    handlers.add(handler);
  };

  const handleClaimed = async (id: string) => {
    const started = clock.now();
    const seen = ledger.lookup(id);
    if (seen) {
      if (seen.state === 'settled') deliver(seen.response);
      else if (seen.state === 'forgotten') answerRefusal(id, 'duplicate_request', started);
      return;
    }
    if (!ledger.hasRoom) return answerRefusal(id, 'channel_exhausted', started);
    ledger.begin(id);
    const finish = (response: BridgeResponse, outcome: RequestOutcome) => {
      ledger.settle(id, response);
      deliver(response);
      telemetry.requestFinished('queue_v1', outcome, Math.max(0, clock.now() - started) / 1000);
    };
    let raw: Uint8Array;
    try {
      raw = await options.readFile(`${spool}/work/${id}.json`);
    } catch {
      return finish(refusal(id, 'forward_failed'), 'forward_failed');
    }
    // base64 grows a body by 4/3; the rest of a request is small.
    if (raw.length > Math.ceil(maxBody / 3) * 4 + 64 * 1024) return finish(refusal(id, 'payload_too_large'), 'payload_too_large');
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(raw).toString('utf8'));
    } catch {
      return finish(refusal(id, 'malformed_request'), 'malformed_request');
    }
    const checked = checkRequestObject(parsed);
    if ('error' in checked || checked.request.id !== id) return finish(refusal(id, 'malformed_request'), 'malformed_request');
    const { request } = checked;
    if (!bodyWithinLimit(request.body, maxBody)) return finish(refusal(id, 'payload_too_large'), 'payload_too_large');
    if (stopping) return finish(refusal(id, 'bridge_closed'), 'bridge_closed');
    const run = runForward(
      { ...request, body: Buffer.from(request.body, 'base64') },
      { forward: options.forward, budgets, clock, maxFrameBytes: MAX_FRAME_BYTES },
    );
    const { response, outcome } = await new Promise<{ response: BridgeResponse; outcome: RequestOutcome }>((resolve) => {
      void run.settled.then(resolve);
      inFlight.set(id, {
        cancel: () => {
          run.cancel();
          resolve({
            response: refusal(id, run.safe ? 'bridge_closed' : 'indeterminate'),
            outcome: run.safe ? 'bridge_closed' : 'indeterminate',
          });
        },
      });
    });
    inFlight.delete(id);
    finish(response, outcome);
  };

  const loop = async () => {
    while (!stopping) {
      const free = maxQueued - active;
      if (free <= 0) {
        await Promise.race([new Promise<void>((resolve) => (slotFreed = resolve)), stopped]);
        slotFreed = undefined;
        continue;
      }
      const asked = clock.now();
      let result: ExecOutcome;
      try {
        waits++;
        const outcome = await Promise.race([options.exec(commands.wait(free, waitMs), { timeoutMs: waitMs + 10_000 }), stopped]);
        // Requests a wait claims after stop() are left to the gateway, which times its callers out.
        if (outcome === 'stopped') break;
        result = outcome;
      } catch {
        if (stopping) break;
        await failed('wait');
        continue;
      }
      if (stopping) break;
      if (result.exitCode !== 0) {
        await failed('wait');
        continue;
      }
      const ids = [...new Set(result.stdout.split('\n').map((line) => line.trim()))]
        .filter((line) => SPOOL_ID_PATTERN.test(line))
        .slice(0, free);
      if (ids.length === 0 && clock.now() - asked < minWaitMs) {
        await failed('wait');
        continue;
      }
      failures = 0;
      for (const id of ids) handle(id);
    }
  };

  const running = loop();
  log.info({ event: 'file_bridge_started' }, 'file bridge polling');

  return {
    async stop() {
      if (stopping) return running;
      stopping = true;
      stopSignal();
      for (const wake of [...sleepers]) wake();
      for (const entry of [...inFlight.values()]) entry.cancel();
      await running;
      // What is in flight was answered just now; a provider call that hangs does not hold stop() past the grace.
      let graceTimer: unknown;
      const grace = new Promise<void>((resolve) => {
        graceTimer = clock.setTimeout(resolve, STOP_GRACE_MS);
      });
      await Promise.race([
        (async () => {
          await settleAll(handlers);
          await settleAll(writes);
        })(),
        grace,
      ]);
      clock.clearTimeout(graceTimer);
      if (toCommit.length > 0) {
        try {
          await options.exec(commands.commit(toCommit.splice(0)), { timeoutMs: 10_000 });
        } catch {
          // The sandbox is going away; its gateway times its callers out.
        }
      }
      log.info({ event: 'file_bridge_stopped' }, 'file bridge stopped');
    },
    stats: () => ({ inFlight: active, lifetimeIds: ledger.ids, consecutiveFailures: failures, waits }),
  };
}

async function settleAll(promises: Set<Promise<unknown>>): Promise<void> {
  while (promises.size > 0) await Promise.allSettled([...promises]);
}
