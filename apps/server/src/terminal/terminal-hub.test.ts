import type { TerminalCloseReason } from '@sandcast/contracts';
import { createFakeProvider } from '@sandcast/provider-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_OPERATOR } from '../http/auth.ts';
import { type TerminalFixture, terminalFixture } from './terminal.fixture.ts';
import { BACKPRESSURE_HIGH_BYTES, type TerminalViewer } from './terminal-hub.ts';

interface TestViewer {
  backlogBytes: number;
  throwOnOutput: boolean;
  outputs: number;
  ended: Promise<TerminalCloseReason>;
  text(): string;
  seen(needle: string | RegExp): Promise<void>;
  nextOutput(): Promise<void>;
  port: TerminalViewer;
}

/** A viewer the test controls: what it received, its backlog, and how it ended. */
function testViewer(): TestViewer {
  let text = '';
  const listeners = new Set<() => void>();
  let resolveEnded: (reason: TerminalCloseReason) => void = () => undefined;
  const viewer: TestViewer = {
    backlogBytes: 0,
    throwOnOutput: false,
    outputs: 0,
    ended: new Promise<TerminalCloseReason>((resolve) => {
      resolveEnded = resolve;
    }),
    text: () => text,
    /** Resolves once the received text contains `needle`. */
    seen: (needle: string | RegExp) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (typeof needle === 'string' ? !text.includes(needle) : !needle.test(text)) return;
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
      }),
    /** Resolves on the next output call. */
    nextOutput: () =>
      new Promise<void>((resolve) => {
        const once = () => {
          listeners.delete(once);
          resolve();
        };
        listeners.add(once);
      }),
    port: {
      output: (chunk: Buffer) => {
        viewer.outputs++;
        if (viewer.throwOnOutput) throw new Error('viewer exploded');
        text += chunk.toString('latin1');
        for (const listener of [...listeners]) listener();
      },
      backlog: () => viewer.backlogBytes,
      end: (reason: TerminalCloseReason) => resolveEnded(reason),
    },
  };
  return viewer;
}

describe('terminal hub', () => {
  let f: TerminalFixture;
  beforeAll(async () => {
    f = await terminalFixture({ fakeProvider: (dataDir) => createFakeProvider({ dataDir }) });
  });
  afterAll(async () => {
    await f?.close();
  });

  const sessionOf = async () => f.services.setupSessions.requireSession((await f.runningSetup()).id);

  it('keeps one shell per setup session; a second viewer re-attaches and gets the replay', async () => {
    const session = await sessionOf();
    const first = testViewer();
    const a = await f.services.terminalHub.attach(session, first.port, { cols: 80, rows: 24 });
    expect(a).toMatchObject({ reattached: false });
    a.write('echo "hub-$((8*8))"; echo "pid=$$"\r');
    await first.seen('hub-64');
    await first.seen(/pid=\d+\r?\n/);
    const second = testViewer();
    const b = await f.services.terminalHub.attach(session, second.port, { cols: 80, rows: 24 });
    expect(b.reattached).toBe(true);
    expect(b.replay.toString()).toContain('hub-64');
    b.write('echo "same-$$"\r');
    const pid = /pid=(\d+)/.exec(first.text())![1];
    await Promise.all([first.seen(`same-${pid}`), second.seen(`same-${pid}`)]);
    a.detach();
    b.detach();
  });

  it('pauses the source while a viewer is behind and resumes once it drains', async () => {
    const session = await sessionOf();
    const viewer = testViewer();
    const shell = await f.services.terminalHub.attach(session, viewer.port, { cols: 80, rows: 24 });
    const before = f.sources.calls.length;
    viewer.backlogBytes = BACKPRESSURE_HIGH_BYTES + 1;
    const next = viewer.nextOutput();
    shell.write('echo "behind-$((1+1))"\r');
    await next;
    // The pressure check runs right after the output call, in the same turn.
    await new Promise((resolve) => setImmediate(resolve));
    expect(f.sources.calls.slice(before)).toEqual(['pause']);
    shell.drained(); // still behind: stays paused
    expect(f.sources.calls.slice(before)).toEqual(['pause']);
    viewer.backlogBytes = 0;
    shell.drained();
    expect(f.sources.calls.slice(before)).toEqual(['pause', 'resume']);
    await viewer.seen('behind-2');
    shell.detach();
  });

  it('a viewer that throws is detached; the shell and its other viewers carry on', async () => {
    const session = await sessionOf();
    const broken = testViewer();
    const healthy = testViewer();
    const b = await f.services.terminalHub.attach(session, broken.port, { cols: 80, rows: 24 });
    const h = await f.services.terminalHub.attach(session, healthy.port, { cols: 80, rows: 24 });
    broken.throwOnOutput = true;
    h.write('echo "one-$((5+5))"\r');
    await healthy.seen('one-10');
    const calls = broken.outputs;
    h.write('echo "two-$((6+6))"\r');
    await healthy.seen('two-12');
    expect(broken.outputs).toBe(calls); // no longer fed
    expect(f.logs.join('\n')).toMatch(/a terminal viewer failed; detaching it/);
    b.detach();
    h.detach();
  });

  it('refuses a ninth viewer on one shell', async () => {
    const session = await sessionOf();
    const attached = [];
    for (let i = 0; i < 8; i++) attached.push(await f.services.terminalHub.attach(session, testViewer().port, { cols: 80, rows: 24 }));
    await expect(f.services.terminalHub.attach(session, testViewer().port, { cols: 80, rows: 24 })).rejects.toThrow(
      /8 terminals are already attached to this setup session; close one first/,
    );
    for (const shell of attached) shell.detach();
  });

  it('ends viewers with ssh_closed when the shell exits, with the setup reason when it ends, and with server_shutdown last', async () => {
    const exiting = await sessionOf();
    const viewer = testViewer();
    const shell = await f.services.terminalHub.attach(exiting, viewer.port, { cols: 80, rows: 24 });
    shell.write('exit\r');
    expect(await viewer.ended).toBe('ssh_closed');

    const cancelled = await sessionOf();
    const watcher = testViewer();
    await f.services.terminalHub.attach(cancelled, watcher.port, { cols: 80, rows: 24 });
    await f.services.setupSessions.cancel(cancelled.id, {}, LOCAL_OPERATOR);
    expect(await watcher.ended).toBe('setup_cancelled');

    const last = await sessionOf();
    const stayer = testViewer();
    await f.services.terminalHub.attach(last, stayer.port, { cols: 80, rows: 24 });
    const live = f.services.terminalHub.size();
    expect(live).toBeGreaterThanOrEqual(1);
    f.services.terminalHub.closeAll();
    expect(await stayer.ended).toBe('server_shutdown');
    expect(f.services.terminalHub.size()).toBe(0);
    await expect(f.services.terminalHub.attach(last, testViewer().port, { cols: 80, rows: 24 })).rejects.toThrow(/shutting down/);
  });
});
