import { TERMINAL_MAX_FRAME_BYTES } from '@sandcast/contracts';
import { createFakeProvider } from '@sandcast/provider-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_OPERATOR } from '../http/auth.ts';
import { type TerminalFixture, terminalFixture } from './terminal.fixture.ts';

/** The browser terminal socket over PGlite and the fake provider, driven frame by frame. */
describe('terminal socket', () => {
  let f: TerminalFixture;
  beforeAll(async () => {
    f = await terminalFixture({ fakeProvider: (dataDir) => createFakeProvider({ dataDir }), authTimeoutMs: 200 });
  });
  afterAll(async () => {
    await f?.close();
  });

  const issue = (setupSessionId: string) => f.services.terminalTokens.issue(setupSessionId, LOCAL_OPERATOR);

  it('closes a socket that sends no auth frame within the timeout, naming the timeout', async () => {
    const session = await f.runningSetup();
    const token = await issue(session.id);
    const socket = f.connect(session.id, { terminalSessionId: token.id });
    socket.receive({ type: 'resize', cols: 90, rows: 30 });
    expect((await socket.closed).code).toBe(1008);
    expect(socket.frames('error')[0]?.message).toMatch(/no \{type:"auth", token\} frame arrived within 0.2 s/);
  });

  it('answers the auth frame with ready, names the terminal session, and attaches to the shell', async () => {
    const session = await f.runningSetup();
    const socket = await f.attached(session.id, { cols: '91', rows: '27' });
    expect(socket.frames('ready')[0]).toMatchObject({ type: 'ready', reattached: false, replayBytes: 0 });
    socket.receive({ type: 'input', data: 'stty size\r' });
    await socket.outputContaining('27 91');
    socket.receive({ type: 'auth', token: 'again' });
    await socket.frame('error');
    expect(socket.frames('error')[0]?.message).toBe('already authenticated');
    socket.drop();
  });

  it('refuses bad first frames with an error frame and 1008, never a crash', async () => {
    const session = await f.runningSetup();
    const firsts: Array<string | Buffer | Record<string, unknown>> = [
      'not json',
      '',
      '\u0000',
      Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00]),
      { type: 'input', data: 'ls\r' },
      { type: 'auth' },
      { type: 'auth', token: 7 },
      { type: 'auth', token: 'x'.repeat(257) },
      { type: 'auth', token: 'ok', extra: true },
      { type: 'resize', cols: 0, rows: 24 },
      { type: 'resize', cols: 1001, rows: 24 },
      { type: 'resize', cols: 1.5, rows: 24 },
      { type: 'resize', cols: Number.MAX_SAFE_INTEGER, rows: -1 },
      { type: 'nope' },
      '[]',
    ];
    for (const first of firsts) {
      const token = await issue(session.id);
      const socket = f.connect(session.id, { terminalSessionId: token.id });
      socket.receive(first);
      expect((await socket.closed).code, JSON.stringify(first)).toBe(1008);
      expect(socket.frames('error')[0]?.message).toMatch(/the first frame must be \{type:"auth", token\}/);
    }
  });

  it('refuses a bad query string, and a token in it (voiding the token)', async () => {
    const session = await f.runningSetup();
    const token = await issue(session.id);
    for (const query of [
      {},
      { terminalSessionId: token.id, cols: '0' },
      { terminalSessionId: token.id, rows: 'many' },
      { terminalSessionId: token.id, x: '1' },
    ]) {
      const socket = f.connect(session.id, query);
      expect((await socket.closed).code).toBe(1008);
      expect(socket.frames('error')[0]?.message).toMatch(/bad query string/);
    }
    const leaked = f.connect(session.id, { terminalSessionId: token.id, token: token.token });
    expect((await leaked.closed).code).toBe(1008);
    const retry = f.connect(session.id, { terminalSessionId: token.id });
    retry.receive({ type: 'auth', token: token.token });
    expect((await retry.closed).code).toBe(1008);
  });

  it('after ready, answers bad frames with an error frame and keeps the terminal', async () => {
    const session = await f.runningSetup();
    const socket = await f.attached(session.id);
    const bad = [
      '{',
      '"input"',
      '{"type":"input","data":null}',
      '{"type":"resize","cols":0,"rows":0}',
      '{"type":"resize","cols":1e12,"rows":5}',
      '{"type":"zzz"}',
    ];
    for (const frame of bad) socket.receive(frame);
    expect(socket.frames('error')).toHaveLength(bad.length);
    // NULs and binary garbage are input like any other bytes.
    socket.receive({ type: 'input', data: 'a\u0000b' });
    socket.receive(Buffer.from([0x00, 0xff, 0x80]), true);
    socket.receive({ type: 'input', data: '\u0015echo "alive-$((2+2))"\r' });
    await socket.outputContaining('alive-4');
    expect(socket.readyState).toBe(socket.OPEN);
    socket.drop();
  });

  it('closes with 1009 on a frame over the limit, before or after auth', async () => {
    const session = await f.runningSetup();
    const token = await issue(session.id);
    const before = f.connect(session.id, { terminalSessionId: token.id });
    before.receive(Buffer.alloc(TERMINAL_MAX_FRAME_BYTES + 1, 'x'), false);
    expect((await before.closed).code).toBe(1009);
    expect(before.frames('error')[0]?.message).toMatch(/exceeds the limit of 65536 bytes/);
    const after = await f.attached(session.id);
    after.receive({ type: 'input', data: 'y'.repeat(TERMINAL_MAX_FRAME_BYTES) });
    expect((await after.closed).code).toBe(1009);
  });

  it('refuses the ninth socket on one shell', async () => {
    const session = await f.runningSetup();
    const sockets = [];
    for (let i = 0; i < 8; i++) sockets.push(await f.attached(session.id));
    expect(sockets.slice(1).every((s) => s.frames('ready')[0]?.reattached === true)).toBe(true);
    const token = await issue(session.id);
    const ninth = f.connect(session.id, { terminalSessionId: token.id });
    ninth.receive({ type: 'auth', token: token.token });
    expect((await ninth.closed).code).toBe(1008);
    expect(ninth.frames('error')[0]?.message).toMatch(/8 terminals are already attached/);
    sockets[0]!.drop();
    // A place is free again.
    (await f.attached(session.id)).drop();
    for (const socket of sockets.slice(1)) socket.drop();
  });

  it('a socket whose send throws is cut off; the other sockets on the shell keep their output', async () => {
    const session = await f.runningSetup();
    const healthy = await f.attached(session.id);
    const broken = await f.attached(session.id);
    broken.sendThrows = new Error('socket exploded');
    healthy.receive({ type: 'input', data: 'echo "both-$((3*3))"\r' });
    await healthy.outputContaining('both-9');
    // A bad frame on the broken socket makes it answer with an error frame, which throws too: it is terminated.
    broken.receive('not json');
    expect((await broken.closed).terminated).toBe(true);
    healthy.receive({ type: 'input', data: 'echo "still-$((4*4))"\r' });
    await healthy.outputContaining('still-16');
    expect(f.logs.join('\n')).toMatch(/terminal socket cannot send; closing it|terminal socket fault; closing it/);
    healthy.drop();
  });

  it('closes with the reason the terminal ended: cancel, finish, expiry, the shell exiting or killed', async () => {
    const cancelled = await f.runningSetup();
    const a = await f.attached(cancelled.id);
    await f.services.setupSessions.cancel(cancelled.id, {}, LOCAL_OPERATOR);
    expect(await a.closed).toMatchObject({ code: 1000 });
    expect(a.frames('closed')[0]).toEqual({ type: 'closed', reason: 'setup_cancelled' });

    const finished = await f.runningSetup();
    const b = await f.attached(finished.id);
    await f.services.setupSessions.finish(finished.id, {}, LOCAL_OPERATOR);
    await b.closed;
    expect(b.frames('closed')[0]).toEqual({ type: 'closed', reason: 'setup_finished' });

    const expiring = await f.runningSetup(60);
    const c = await f.attached(expiring.id);
    f.clock.advance(61_000);
    await f.services.setupSessions.requireSession(expiring.id); // expiry applies on read
    await c.closed;
    expect(c.frames('closed')[0]).toEqual({ type: 'closed', reason: 'expired' });

    const exiting = await f.runningSetup();
    const d = await f.attached(exiting.id);
    d.receive({ type: 'input', data: 'exit\r' });
    await d.closed;
    expect(d.frames('closed')[0]).toEqual({ type: 'closed', reason: 'ssh_closed' });
    const killed = await f.attached(exiting.id);
    expect(killed.frames('ready')[0]?.reattached).toBe(false); // a new shell
    killed.receive({ type: 'input', data: 'kill -9 $$\r' });
    await killed.closed;
    expect(killed.frames('closed')[0]).toEqual({ type: 'closed', reason: 'ssh_closed' });
  });
});
