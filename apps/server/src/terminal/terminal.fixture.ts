import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { testDatabases } from '@sandcast/db/testing';
import type { PtyStream, SandboxProvider } from '@sandcast/provider-sdk';
import type { WebSocket } from 'ws';
import { type AppServices, buildApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { LOCAL_OPERATOR } from '../http/auth.ts';
import { createProviderRegistry } from '../providers/provider-registry.ts';
import { createSecretBox } from '../services/secrets.ts';
import { handleTerminalSocket } from './terminal-socket.ts';

/** What a source did, for the backpressure tests: every pause and resume of every PTY opened. */
interface SourceLog {
  calls: string[];
}

/** The provider, with its PTYs' pause/resume recorded. */
function recording(fake: SandboxProvider, log: SourceLog): SandboxProvider {
  return {
    ...fake,
    openPty: async (...args: Parameters<SandboxProvider['openPty']>): Promise<PtyStream> => {
      const pty = await fake.openPty(...args);
      return {
        ...pty,
        pause: () => {
          log.calls.push('pause');
          pty.pause();
        },
        resume: () => {
          log.calls.push('resume');
          pty.resume();
        },
      };
    },
  };
}

/**
 * A WebSocket as `handleTerminalSocket` sees one, driven by the test: `receive` delivers a client
 * frame, `sent` holds what the server sent, `closed` resolves with the server's close code.
 */
export class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readonly CLOSING = 2;
  readonly CLOSED = 3;
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: Array<Record<string, unknown> | Buffer> = [];
  /** When set, every send throws it (a socket broken in a way nobody foresaw). */
  sendThrows: Error | null = null;
  private closeCode: number | null = null;
  readonly closed: Promise<{ code: number; reason: string; terminated: boolean }>;
  private resolveClosed: (value: { code: number; reason: string; terminated: boolean }) => void = () => undefined;
  private readonly sendListeners = new Set<() => void>();

  constructor() {
    super();
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
  }

  send(data: string | Buffer, options?: unknown, callback?: (error?: Error) => void): void {
    if (this.sendThrows) throw this.sendThrows;
    const cb = typeof options === 'function' ? (options as (error?: Error) => void) : callback;
    this.sent.push(typeof data === 'string' ? (JSON.parse(data) as Record<string, unknown>) : Buffer.from(data));
    for (const listener of [...this.sendListeners]) listener();
    if (cb) setImmediate(() => cb());
  }

  close(code: number, reason: string): void {
    if (this.readyState !== this.OPEN) return;
    this.readyState = this.CLOSING;
    this.closeCode = code;
    // The client answers the close handshake.
    setImmediate(() => this.finish(code, reason, false));
  }

  terminate(): void {
    this.finish(this.closeCode ?? 1006, '', true);
  }

  ping(): void {}

  /** A client frame arrives. */
  receive(data: string | Buffer | Record<string, unknown>, isBinary = Buffer.isBuffer(data)): void {
    const raw = typeof data === 'string' ? Buffer.from(data) : Buffer.isBuffer(data) ? data : Buffer.from(JSON.stringify(data));
    this.emit('message', raw, isBinary);
  }

  /** The client goes away without a close frame. */
  drop(): void {
    this.finish(1006, '', true);
  }

  frames(type: string): Array<Record<string, unknown>> {
    return this.sent.filter((f): f is Record<string, unknown> => !Buffer.isBuffer(f) && f.type === type);
  }

  output(): string {
    return Buffer.concat(this.sent.filter((f): f is Buffer => Buffer.isBuffer(f))).toString('latin1');
  }

  /** Resolves on the first frame of this type, sent already or later. */
  frame(type: string): Promise<Record<string, unknown>> {
    return this.until(() => this.frames(type)[0] ?? null, `a ${type} frame`);
  }

  /** Resolves once the output contains `text`. */
  outputContaining(text: string): Promise<string> {
    return this.until(() => (this.output().includes(text) ? this.output() : null), `output containing ${text}`);
  }

  private until<T>(found: () => T | null, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = found();
        if (value === null) return;
        this.sendListeners.delete(check);
        resolve(value);
      };
      this.sendListeners.add(check);
      check();
      void this.closed.then(() =>
        setImmediate(() => {
          if (this.sendListeners.delete(check))
            reject(new Error(`the socket closed without ${what}; sent: ${JSON.stringify(this.frames('error'))}`));
        }),
      );
    });
  }

  private finish(code: number, reason: string, terminated: boolean): void {
    if (this.readyState === this.CLOSED) return;
    this.readyState = this.CLOSED;
    this.emit('close', code, Buffer.from(reason));
    this.resolveClosed({ code, reason, terminated });
  }
}

export interface TerminalFixture {
  services: AppServices;
  sources: SourceLog;
  logs: string[];
  clock: { now(): Date; advance(ms: number): void };
  /** A fresh environment on the fake provider with a running setup session. */
  runningSetup(ttlSeconds?: number): Promise<{ id: string; expiresAt: string }>;
  /** Opens a socket on a setup session's terminal the way the route does. */
  connect(setupSessionId: string, query: Record<string, unknown>): FakeSocket;
  /** A socket that has sent a fresh token and received `ready`. */
  attached(setupSessionId: string, query?: Record<string, unknown>): Promise<FakeSocket>;
  close(): Promise<void>;
}

/**
 * The terminal services over an embedded PGlite and the fake provider, without HTTP. The test
 * passes the fake (concrete providers are named only in tests and the registry).
 */
export async function terminalFixture(options: {
  fakeProvider: (dataDir: string) => SandboxProvider;
  authTimeoutMs?: number;
}): Promise<TerminalFixture> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sandcast-terminal-unit-'));
  const database = testDatabases().find((d) => d.kind === 'pglite')!;
  const store = await database.open();
  const sources: SourceLog = { calls: [] };
  const providers = createProviderRegistry([recording(options.fakeProvider(dataDir), sources)]);
  let offsetMs = 0;
  const clock = {
    now: () => new Date(Date.now() + offsetMs),
    advance: (ms: number) => {
      offsetMs += ms;
    },
  };
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  const config = loadConfig({ SANDCAST_DATA_DIR: dataDir, SANDCAST_LOG_LEVEL: 'debug', SANDCAST_SSH_PORT: 'off' });
  const { app, services } = buildApp({ config, store, providers, secrets: createSecretBox(randomBytes(32)), logStream, clock });
  let environments = 0;
  const fixture: TerminalFixture = {
    services,
    sources,
    logs,
    clock,
    async runningSetup(ttlSeconds = 3600) {
      const env = await services.environments.create({ name: `unit-${++environments}`, provider: 'fake', config: {} }, LOCAL_OPERATOR);
      const { session } = await services.setupSessions.start(env.id, { ttlSeconds }, LOCAL_OPERATOR);
      return session;
    },
    connect(setupSessionId, query) {
      const socket = new FakeSocket();
      handleTerminalSocket(
        socket as unknown as WebSocket,
        { params: { sessionId: setupSessionId }, query },
        {
          hub: services.terminalHub,
          tokens: services.terminalTokens,
          log: app.log,
          authTimeoutMs: options.authTimeoutMs ?? 10_000,
        },
      );
      return socket;
    },
    async attached(setupSessionId, query = {}) {
      const token = await services.terminalTokens.issue(setupSessionId, LOCAL_OPERATOR);
      const socket = fixture.connect(setupSessionId, { terminalSessionId: token.id, ...query });
      socket.receive({ type: 'auth', token: token.token });
      await socket.frame('ready');
      return socket;
    },
    async close() {
      services.terminalHub.closeAll();
      await app.close();
      for (const { provider } of providers.list()) {
        for (const instance of await provider.listInstances().catch(() => []))
          await provider.destroy(instance.instanceId).catch(() => undefined);
      }
      await providers.close();
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return fixture;
}
