import { type Disposable, PidLineFilter, type PtyOptions, type PtyStream, pidLineCommand } from '@sandcast/provider-sdk';
import type Docker from 'dockerode';
import { WORKDIR } from './config.ts';
import { ENGINE_CALL_DEADLINE_MS, withDeadline } from './connection.ts';
import type { ContainerHandle } from './containers.ts';
import { execStartError, killProcessGroup } from './exec.ts';

/** A login shell: bash where the image has it, else sh. */
const DEFAULT_PTY_COMMAND = ['/bin/sh', '-c', 'if command -v bash >/dev/null 2>&1; then exec bash -l; fi; exec sh -l'];

/**
 * The PTY's command runs under a wrapper that prints its pid first (the terminal's process group:
 * Docker makes exec processes session leaders), so `close()` can hang the whole session up. The
 * line is removed from the output before any listener sees it.
 */
const PID_MARKER = 'sandcast-pty-pid=';

/** Output kept while nobody listens (a terminal between two subscribers); the rest is dropped. */
const MAX_EARLY_BYTES = 1024 * 1024;

type DataListener = (chunk: Buffer) => void;
type ExitListener = (exit: { exitCode: number | null; signal?: string | undefined }) => void;

export async function openPty(handle: ContainerHandle, options: PtyOptions): Promise<PtyStream> {
  const command = options.command && options.command.length > 0 ? options.command : DEFAULT_PTY_COMMAND;
  let exec: Docker.Exec;
  let socket: NodeJS.ReadWriteStream;
  const entry = handle.gate?.enter(handle.container.id);
  try {
    exec = await handle.container.exec({
      Cmd: pidLineCommand(PID_MARKER, { toStderr: false, name: 'sandcast-pty' }, command),
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: true,
      WorkingDir: WORKDIR,
      Env: ['TERM=xterm-256color', ...Object.entries(options.env ?? {}).map(([key, value]) => `${key}=${value}`)],
    });
    socket = (await withDeadline(exec.start({ hijack: true, stdin: true, Tty: true }), ENGINE_CALL_DEADLINE_MS, {
      action: 'start a terminal',
      engineUrl: handle.engineUrl,
    })) as NodeJS.ReadWriteStream;
    entry?.releaseWhenStarted(exec);
  } catch (error) {
    entry?.release();
    throw await execStartError(error, handle);
  }

  const dataListeners = new Set<DataListener>();
  const exitListeners = new Set<ExitListener>();
  // Output that arrives before anyone listens is kept, so the first prompt is not lost.
  const early: Buffer[] = [];
  let exitResult: { exitCode: number | null } | null = null;
  let closed = false;
  let ordered: Promise<void> = Promise.resolve();
  let pendingResizes = 0;

  let earlyBytes = 0;
  const emit = (chunk: Buffer) => {
    if (chunk.length === 0) return;
    if (dataListeners.size === 0) {
      if (earlyBytes + chunk.length > MAX_EARLY_BYTES) return;
      early.push(chunk);
      earlyBytes += chunk.length;
    } else for (const listener of dataListeners) listener(chunk);
  };

  const pidLine = new PidLineFilter(PID_MARKER, emit);
  socket.on('data', (chunk: Buffer) => pidLine.push(chunk));

  const finish = async () => {
    if (exitResult) return;
    let exitCode: number | null = null;
    for (let attempt = 0; attempt < 40; attempt++) {
      const info = await exec.inspect().catch(() => null);
      if (!info) break;
      if (!info.Running) {
        exitCode = info.ExitCode ?? null;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    if (exitResult) return;
    exitResult = { exitCode };
    for (const listener of exitListeners) listener(exitResult);
  };
  socket.on('end', () => void finish());
  socket.on('close', () => void finish());
  socket.on('error', () => void finish());

  // Engines before API 1.42 ignore a console size at start; resize right away instead.
  await exec.resize({ h: options.rows, w: options.cols }).catch(() => undefined);

  const disposable = <T>(set: Set<T>, item: T): Disposable => {
    set.add(item);
    return { dispose: () => set.delete(item) };
  };

  return {
    write(data) {
      if (closed) return;
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      if (pendingResizes === 0) socket.write(bytes);
      else ordered = ordered.then(() => void socket.write(bytes));
    },
    resize(cols, rows) {
      if (closed || exitResult) return;
      // Resizes travel on their own request; input typed after a resize waits for it, so a
      // command run right after resizing sees the new size.
      pendingResizes++;
      ordered = ordered
        .then(() => exec.resize({ h: rows, w: cols }))
        .catch(() => undefined)
        .finally(() => {
          pendingResizes--;
        });
    },
    onData(listener) {
      const sub = disposable(dataListeners, listener);
      if (early.length > 0) {
        const pending = early.splice(0);
        earlyBytes = 0;
        for (const chunk of pending) listener(chunk);
      }
      return sub;
    },
    onExit(listener) {
      if (exitResult) {
        const result = exitResult;
        queueMicrotask(() => listener(result));
      }
      return disposable(exitListeners, listener);
    },
    pause() {
      (socket as unknown as { pause(): void }).pause();
    },
    resume() {
      (socket as unknown as { resume(): void }).resume();
    },
    close() {
      if (closed) return;
      closed = true;
      const target = pidLine.pid;
      // Hang the terminal's session up, as closing a real terminal would, then drop the socket.
      const hangUp = target !== null && target > 0 && !exitResult ? killProcessGroup(handle, target, 'HUP') : Promise.resolve();
      void hangUp.catch(() => undefined).finally(() => (socket as unknown as { destroy(): void }).destroy());
    },
  };
}
