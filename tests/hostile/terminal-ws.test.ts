import type { SandcastClient } from '@sandcast/client';
import { TERMINAL_MAX_FRAME_BYTES } from '@sandcast/contracts';
import { testDatabases } from '@sandcast/db/testing';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { enableEnvironments, type TestServer } from '../integration/support/harness.ts';
import { attachTerminal, type RawTerminalSocket, rawTerminalSocket } from '../integration/support/terminal-client.ts';
import { attack, startHostileServer } from './support/attack.ts';

/**
 * The browser terminal's WebSocket is `public` at the HTTP layer (its credential is the first
 * frame), so anyone who can reach the server can open one. Every attack ends in a refusal (an
 * `error` frame and a close) or is ignored, the server keeps serving, and real terminals work.
 */
describe('browser terminal WebSocket under attack', () => {
  let t: TestServer;
  let environments = 0;

  const runningSetup = async (client: SandcastClient) => {
    const env = await client.environments.create({ name: `hostile-ws-${++environments}`, provider: 'fake', config: {} });
    return (await client.customImages.startSetup(env.id)).session;
  };
  const token = (sessionId: string) => t.client.customImages.terminalSessionToken(sessionId);
  const open = async (path: string): Promise<RawTerminalSocket> => {
    const socket = rawTerminalSocket(t.url, path);
    await socket.opened;
    return socket;
  };
  /** The server still answers HTTP and opens a working terminal. */
  const stillServing = async (sessionId: string) => {
    expect((await t.fetch('/api/health')).status).toBe(200);
    const term = await attachTerminal(t.url, await token(sessionId));
    term.type('echo "fine-$((7*6))"\r');
    await term.waitFor('fine-42');
    term.connection.close();
    await term.connection.closed;
  };

  beforeAll(async () => {
    t = await startHostileServer({
      database: testDatabases().find((d) => d.kind === 'pglite')!,
      env: { SANDCAST_TERMINAL_AUTH_TIMEOUT_SECONDS: '0.3' },
    });
    await enableEnvironments(t.client);
  });
  afterAll(async () => {
    await t?.close();
  });

  attack('a socket that never sends its auth frame is closed', async () => {
    const session = await runningSetup(t.client);
    const silent = await open((await token(session.id)).websocketPath);
    expect((await silent.closed).code).toBe(1008);
    expect(silent.error()).toMatch(/no \{type:"auth", token\} frame arrived within 0.3 s/);
    // Resizes do not keep a socket alive without auth.
    const resizing = await open((await token(session.id)).websocketPath);
    for (let i = 0; i < 20; i++) resizing.sendJson({ type: 'resize', cols: 80 + i, rows: 24 });
    expect((await resizing.closed).code).toBe(1008);
    await stillServing(session.id);
  });

  attack('wrong, malformed and oversized tokens are refused', async () => {
    const session = await runningSetup(t.client);
    const issued = await token(session.id);
    for (const [bad, message] of [
      ['x'.repeat(43), /not valid for this terminal session/],
      [`${issued.token}\u0000`, /not valid for this terminal session/],
      ['\ud800', /not valid for this terminal session/],
      ['x'.repeat(10_000), /first frame must be \{type:"auth", token\}/],
      ['', /first frame must be \{type:"auth", token\}/],
      [42, /first frame must be \{type:"auth", token\}/],
      [null, /first frame must be \{type:"auth", token\}/],
      [['a'], /first frame must be \{type:"auth", token\}/],
    ] as const) {
      const socket = await open(issued.websocketPath);
      socket.sendJson({ type: 'auth', token: bad });
      expect((await socket.closed).code).toBe(1008);
      expect(socket.error()).toMatch(message);
    }
    // None of that burnt the real token.
    (await attachTerminal(t.url, issued)).connection.close();
  });

  attack('a token works once, even when two sockets race with it', async () => {
    const session = await runningSetup(t.client);
    const issued = await token(session.id);
    const racers = await Promise.all([open(issued.websocketPath), open(issued.websocketPath), open(issued.websocketPath)]);
    for (const racer of racers) racer.sendJson({ type: 'auth', token: issued.token });
    const outcomes = await Promise.all(
      racers.map((racer) => Promise.race([racer.frame('ready').then(() => 'ready'), racer.closed.then(() => racer.error() ?? 'closed')])),
    );
    expect(outcomes.filter((o) => o === 'ready')).toHaveLength(1);
    expect(outcomes.filter((o) => /already used/.test(o))).toHaveLength(2);
    for (const racer of racers) racer.socket.close();
    const later = await open(issued.websocketPath);
    later.sendJson({ type: 'auth', token: issued.token });
    expect((await later.closed).code).toBe(1008);
    expect(later.error()).toMatch(/already used/);
  });

  attack("a valid token is refused on another setup session's terminal, either way round", async () => {
    const mine = await runningSetup(t.client);
    const theirs = await runningSetup(t.client);
    const myToken = await token(mine.id);
    const theirToken = await token(theirs.id);
    const paths = [
      // my terminal session id and token, on their setup session's path
      `/api/environment-custom-image-setup-sessions/${theirs.id}/terminal/ws?terminalSessionId=${myToken.id}`,
      // their terminal session id, on their path, with my token
      theirToken.websocketPath,
      // a setup session that does not exist
      `/api/environment-custom-image-setup-sessions/setup_nope/terminal/ws?terminalSessionId=${myToken.id}`,
      `/api/environment-custom-image-setup-sessions/..%2F..%2Fapi%2Fkeys/terminal/ws?terminalSessionId=${myToken.id}`,
    ];
    for (const path of paths) {
      const socket = await open(path);
      socket.sendJson({ type: 'auth', token: myToken.token });
      expect((await socket.closed).code).toBe(1008);
      expect(socket.error()).toMatch(/not valid for this terminal session/);
    }
    // Both tokens still work where they belong.
    (await attachTerminal(t.url, myToken)).connection.close();
    (await attachTerminal(t.url, theirToken)).connection.close();
  });

  attack('oversized frames close the socket with 1009, before and after auth, up to past the transport limit', async () => {
    const session = await runningSetup(t.client);
    for (const size of [TERMINAL_MAX_FRAME_BYTES + 1, 4 * 1024 * 1024]) {
      const before = await open((await token(session.id)).websocketPath);
      before.socket.send(Buffer.alloc(size, 'x').toString());
      expect((await before.closed).code).toBe(1009);

      const issued = await token(session.id);
      const after = await open(issued.websocketPath);
      after.sendJson({ type: 'auth', token: issued.token });
      await after.frame('ready');
      after.sendJson({ type: 'input', data: 'y'.repeat(size) });
      expect((await after.closed).code).toBe(1009);
    }
    await stillServing(session.id);
  });

  attack('invalid JSON, unknown frames, absurd sizes and binary garbage are answered, never crash the server', async () => {
    const session = await runningSetup(t.client);
    // Before auth: refused.
    for (const send of [
      (s: RawTerminalSocket) => s.socket.send('{"type":'),
      (s: RawTerminalSocket) => s.socket.send('\u0000\u0000'),
      (s: RawTerminalSocket) => s.socket.send(Buffer.from([0xff, 0x00, 0xfe, 0x80])),
      (s: RawTerminalSocket) => s.sendJson({ type: 'resize', cols: 1e9, rows: -1 }),
      (s: RawTerminalSocket) => s.sendJson({ type: '__proto__', token: 'x' }),
    ]) {
      const socket = await open((await token(session.id)).websocketPath);
      send(socket);
      expect((await socket.closed).code).toBe(1008);
      expect(socket.error()).toMatch(/first frame must be \{type:"auth", token\}/);
    }
    // After auth: each bad frame gets an error frame and the terminal keeps working.
    const issued = await token(session.id);
    const socket = await open(issued.websocketPath);
    socket.sendJson({ type: 'auth', token: issued.token });
    await socket.frame('ready');
    const bad = [
      'not json',
      '[]',
      '{"type":"input","data":5}',
      '{"type":"resize","cols":0,"rows":24}',
      '{"type":"resize","cols":"wide"}',
      '{"type":"exec"}',
    ];
    let text = '';
    const outputListeners = new Set<() => void>();
    socket.socket.on('message', (data: Buffer, isBinary) => {
      if (!isBinary) return;
      text += data.toString('latin1');
      for (const listener of [...outputListeners]) listener();
    });
    const output = (needle: string) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (!text.includes(needle)) return;
          outputListeners.delete(check);
          resolve(text);
        };
        outputListeners.add(check);
        check();
        setTimeout(() => reject(new Error(`no ${needle} in the output: ${JSON.stringify(text.slice(-800))}`)), 20_000).unref();
        socket.closed.then((how) =>
          reject(
            new Error(
              `closed ${how.code} ${how.reason}: ${JSON.stringify(socket.frames.filter((f) => !Buffer.isBuffer(f)))} ${text.slice(-500)}`,
            ),
          ),
        );
      });
    for (const frame of bad) socket.socket.send(frame);
    socket.sendJson({ type: 'auth', token: issued.token });
    // The shell is up first: garbage during its start-up is not what this attack is about.
    socket.sendJson({ type: 'input', data: 'echo "up-$((2+2))"\r' });
    await output('up-4');
    // Binary frames after auth are raw input: garbage with NULs and high bytes, then a line kill.
    socket.socket.send(Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x00, 0x41]));
    socket.sendJson({ type: 'input', data: '\u0000\u0015' }); // ^U kills the garbage line (a ^C would also flush what follows)
    socket.sendJson({ type: 'input', data: 'echo "after-garbage-$((5*5))"\r' });
    const seen = await output('after-garbage-25');
    expect(seen).toContain('after-garbage-25');
    const errors = socket.frames.filter((f) => !Buffer.isBuffer(f) && f.type === 'error').map((f) => (f as { message: string }).message);
    expect(errors).toHaveLength(bad.length + 1);
    expect(errors.at(-1)).toBe('already authenticated');
    socket.socket.close();
    await stillServing(session.id);
  });

  attack('a flood of resize frames neither ends the terminal nor the server', async () => {
    const session = await runningSetup(t.client);
    const issued = await token(session.id);
    const socket = await open(issued.websocketPath);
    socket.sendJson({ type: 'auth', token: issued.token });
    await socket.frame('ready');
    for (let i = 0; i < 5000; i++) socket.sendJson({ type: 'resize', cols: 1 + (i % 1000), rows: 1 + ((i * 7) % 1000) });
    socket.sendJson({ type: 'resize', cols: 77, rows: 33 });
    socket.sendJson({ type: 'input', data: 'stty size\r' });
    await new Promise<void>((resolve, reject) => {
      let text = '';
      socket.socket.on('message', (data: Buffer, isBinary) => {
        if (!isBinary) return;
        text += data.toString('latin1');
        if (text.includes('33 77')) resolve();
      });
      socket.closed.then(() => reject(new Error(`closed: ${socket.error()}`)));
    });
    expect(socket.frames.filter((f) => !Buffer.isBuffer(f) && f.type === 'error')).toEqual([]);
    socket.socket.close();
    await stillServing(session.id);
  });

  attack('more frames than the server queues while it checks the token close the socket', async () => {
    const session = await runningSetup(t.client);
    const issued = await token(session.id);
    const socket = await open(issued.websocketPath);
    socket.sendJson({ type: 'auth', token: issued.token });
    for (let i = 0; i < 2000; i++) socket.sendJson({ type: 'input', data: 'x' });
    const outcome = await Promise.race([socket.closed.then(() => socket.error()), socket.frame('ready').then(() => 'ready')]);
    // Either the token check won the race (then the frames are input) or the queue overflowed.
    if (outcome !== 'ready') expect(outcome).toMatch(/too many frames before the terminal was ready/);
    socket.socket.close();
    await stillServing(session.id);
  });
});
