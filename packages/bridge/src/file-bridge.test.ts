import { describe, expect, it } from 'vitest';
import { type ExecOutcome, type FileBridgeOptions, spoolCommands, startFileBridge } from './file-bridge.ts';
import type { ForwardRequest, ForwardResponse } from './forward.ts';
import type { BridgeResponse } from './frames.ts';
import { createManualClock, type ManualClock, settle } from './testing/index.ts';

const GATEWAY = ['/opt/sandcast/sandcast-bridge'];
const SPOOL = '/run/sandcast-bridge';

/** The sandbox side of the spool, in memory: what the C gateway's `wait` and `commit` do. */
function fakeSandbox(clock: ManualClock) {
  const req = new Map<string, Buffer>();
  const work = new Map<string, Buffer>();
  const tmp = new Map<string, Buffer>();
  const res = new Map<string, BridgeResponse>();
  const commands: string[][] = [];
  const execTimes: number[] = [];
  let failures = 0;
  let instantEmpty = false;
  let extraWaitLines: string[] = [];
  let arrived: (() => void) | undefined;
  const claim = (max: number) => {
    const ids = [...req.keys()].slice(0, max);
    for (const id of ids) {
      work.set(id, req.get(id) as Buffer);
      req.delete(id);
    }
    const lines = [...ids, ...extraWaitLines];
    extraWaitLines = [];
    return { exitCode: 0, stdout: lines.map((l) => `${l}\n`).join(''), stderr: '' };
  };
  const io: Pick<FileBridgeOptions, 'exec' | 'readFile' | 'writeFile'> = {
    async exec(command) {
      commands.push(command);
      execTimes.push(clock.now());
      if (failures > 0) {
        failures--;
        throw new Error('provider exec failed');
      }
      const verb = command[GATEWAY.length];
      if (verb === 'commit') {
        for (const id of command.slice(command.indexOf('--') + 1)) {
          const data = tmp.get(id);
          if (data) res.set(id, JSON.parse(data.toString()) as BridgeResponse);
          tmp.delete(id);
        }
        return { exitCode: 0, stdout: '', stderr: '' };
      }
      const max = Number(command[command.indexOf('--max') + 1]);
      const waitMs = Number(command[command.indexOf('--wait-ms') + 1]);
      if (req.size > 0 || extraWaitLines.length > 0 || instantEmpty) return claim(max);
      return new Promise<ExecOutcome>((resolve) => {
        const timer = clock.setTimeout(() => resolve(claim(max)), waitMs);
        arrived = () => {
          clock.clearTimeout(timer);
          resolve(claim(max));
        };
      });
    },
    async readFile(path) {
      const id = /\/work\/(.+)\.json$/.exec(path)?.[1];
      const data = id ? work.get(id) : undefined;
      if (!data) throw new Error('no such file');
      return data;
    },
    async writeFile(path, data) {
      const id = /\/res\/\.(.+)\.tmp$/.exec(path)?.[1];
      if (!id) throw new Error(`unexpected write ${path}`);
      tmp.set(id, Buffer.from(data));
    },
  };
  return {
    io,
    commands,
    execTimes,
    res,
    put(id: string, request: Record<string, unknown> = {}) {
      req.set(id, Buffer.from(JSON.stringify({ id, method: 'GET', path: '/api/x', headers: {}, body: '', ...request })));
      const wake = arrived;
      arrived = undefined;
      wake?.();
    },
    putRaw(id: string, data: Buffer) {
      req.set(id, data);
      const wake = arrived;
      arrived = undefined;
      wake?.();
    },
    failNext(n: number) {
      failures = n;
    },
    set instantEmpty(value: boolean) {
      instantEmpty = value;
    },
    set extraWaitLines(lines: string[]) {
      extraWaitLines = lines;
    },
  };
}

function setup(
  options: Partial<FileBridgeOptions> & { manual?: boolean; prepare?: (sandbox: ReturnType<typeof fakeSandbox>) => void } = {},
) {
  const clock = createManualClock(1_000_000);
  const sandbox = fakeSandbox(clock);
  options.prepare?.(sandbox);
  const calls: { request: ForwardRequest; resolve: (r: ForwardResponse) => void; signal: AbortSignal }[] = [];
  const bridge = startFileBridge({
    ...sandbox.io,
    gatewayCommand: GATEWAY,
    clock,
    forward: (request, signal) =>
      new Promise((resolve) => {
        calls.push({ request, resolve, signal });
        if (!options.manual) resolve({ status: 200, headers: { 'content-type': 'text/plain' }, body: Buffer.from(`hi ${request.id}`) });
      }),
    ...options,
  });
  const body = (id: string) => Buffer.from(sandbox.res.get(id)?.body ?? '', 'base64').toString();
  const code = (id: string) => (JSON.parse(body(id)) as { error: { code: string } }).error.code;
  return { clock, sandbox, calls, bridge, body, code };
}

describe('startFileBridge', () => {
  it('claims a request with the gateway’s wait, forwards it once and commits the answer', async () => {
    const t = setup();
    await settle();
    t.sandbox.put('r1', { method: 'POST', body: Buffer.from('{}').toString('base64') });
    await settle();
    expect(t.calls).toHaveLength(1);
    expect(t.calls[0]?.request).toMatchObject({ id: 'r1', method: 'POST', path: '/api/x' });
    expect(t.sandbox.res.get('r1')).toMatchObject({ id: 'r1', status: 200, headers: { 'content-type': 'text/plain' } });
    expect(t.body('r1')).toBe('hi r1');
    const commands = spoolCommands(GATEWAY, SPOOL);
    expect(t.sandbox.commands[0]).toEqual(commands.wait(64, 25_000));
    expect(t.sandbox.commands).toContainEqual(commands.commit(['r1']));
    await t.bridge.stop();
  });

  it('costs one exec per wait while idle', async () => {
    const t = setup();
    await t.clock.advance(100_000);
    expect(t.bridge.stats().waits).toBe(5);
    await t.bridge.stop();
  });

  it('backs off exponentially up to a cap on provider failures, then carries on', async () => {
    const t = setup({ backoff: { initialMs: 100, maxMs: 1_000 }, prepare: (sandbox) => sandbox.failNext(6) });
    await t.clock.advance(5_000);
    const gaps = t.sandbox.execTimes.slice(1, 7).map((at, i) => at - (t.sandbox.execTimes[i] as number));
    expect(gaps).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    t.sandbox.put('after');
    await settle();
    expect(t.body('after')).toBe('hi after');
    expect(t.bridge.stats().consecutiveFailures).toBe(0);
    await t.bridge.stop();
  });

  it('treats a wait that comes back empty at once as a failure, so a broken gateway cannot make it spin', async () => {
    const t = setup({
      backoff: { initialMs: 100, maxMs: 400 },
      prepare: (sandbox) => {
        sandbox.instantEmpty = true;
      },
    });
    await t.clock.advance(2_000);
    expect(t.bridge.stats().waits).toBeLessThanOrEqual(8);
    await t.bridge.stop();
  });

  it('never forwards an id twice, and ignores wait output that is not a spool id', async () => {
    const t = setup();
    await settle();
    t.sandbox.put('same');
    await settle();
    t.sandbox.extraWaitLines = ['same', '../../etc/passwd', '.hidden', 'a/b', 'x'.repeat(200), ''];
    t.sandbox.put('other');
    await settle();
    expect(t.calls.map((c) => c.request.id)).toEqual(['same', 'other']);
    await t.bridge.stop();
  });

  it('claims no more than its queue holds, and claims again as answers go out', async () => {
    const t = setup({ manual: true, maxQueued: 2 });
    await settle();
    for (const id of ['a', 'b', 'c']) t.sandbox.put(id);
    await settle();
    expect(t.calls.map((c) => c.request.id)).toEqual(['a', 'b']);
    const waitsWhileFull = t.bridge.stats().waits;
    await t.clock.advance(1_000);
    expect(t.bridge.stats().waits).toBe(waitsWhileFull);
    t.calls[0]?.resolve({ status: 200, headers: {}, body: new Uint8Array() });
    await settle();
    expect(t.calls.map((c) => c.request.id)).toEqual(['a', 'b', 'c']);
    expect(t.sandbox.commands).toContainEqual(spoolCommands(GATEWAY, SPOOL).wait(1, 25_000));
    for (const call of t.calls.slice(1)) call.resolve({ status: 200, headers: {}, body: new Uint8Array() });
    await t.bridge.stop();
  });

  it('refuses an oversized body, an unreadable file and a file whose id is not its name, without forwarding', async () => {
    const t = setup({ maxBodyBytes: 10 });
    await settle();
    t.sandbox.put('big', { method: 'POST', body: Buffer.alloc(11).toString('base64') });
    t.sandbox.putRaw('junk', Buffer.from('not json'));
    t.sandbox.put('liar', { id: 'someone-else' });
    await settle();
    expect(t.calls).toHaveLength(0);
    expect(t.sandbox.res.get('big')?.status).toBe(413);
    expect(t.code('big')).toBe('payload_too_large');
    expect(t.code('junk')).toBe('malformed_request');
    expect(t.code('liar')).toBe('malformed_request');
    await t.bridge.stop();
  });

  it('answers 504 indeterminate for an unsafe request past its budget, retryable 504 for a safe one', async () => {
    const t = setup({ manual: true });
    await settle();
    t.sandbox.put('w', { method: 'PATCH' });
    t.sandbox.put('r', { method: 'GET' });
    await settle();
    await t.clock.advance(32_000);
    expect(t.code('w')).toBe('indeterminate');
    expect(t.code('r')).toBe('forward_timeout');
    expect(t.calls).toHaveLength(2);
    await t.bridge.stop();
  });

  it('stop(): returns while a wait is blocked, answering what is in flight (unsafe indeterminate, safe 503)', async () => {
    const t = setup({ manual: true });
    await settle();
    t.sandbox.put('w', { method: 'POST' });
    t.sandbox.put('r');
    await settle();
    let stopped = false;
    void t.bridge.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(true);
    expect(t.code('w')).toBe('indeterminate');
    expect(t.code('r')).toBe('bridge_closed');
    expect(t.calls.every((c) => c.signal.aborted)).toBe(true);
    const execs = t.sandbox.commands.length;
    await t.clock.advance(120_000);
    expect(t.sandbox.commands.length).toBe(execs);
  });
});
