import { type Disposable, PidLineFilter, type PtyOptions, type PtyStream } from '@sandcast/provider-sdk';
import type { Cluster } from './cluster.ts';
import { WORKDIR } from './config.ts';
import { PID_MARKER, wrapCommand } from './exec.ts';
import { exitCodeOf, openExecSocket } from './exec-socket.ts';

/** A login shell: bash when the image has it. */
const LOGIN_SHELL = ['/bin/sh', '-c', 'if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi'];

/**
 * A terminal over pods/exec with `tty=true`: input on the stdin channel, the terminal's output on
 * stdout, sizes on the resize channel, the exit on the error channel. `pause` stops reading the
 * socket, which holds the shell at its next write.
 */
export async function openPty(cluster: Cluster, pod: string, options: PtyOptions): Promise<PtyStream> {
  const command = wrapCommand(
    { command: options.command ?? LOGIN_SHELL, cwd: WORKDIR, env: { TERM: 'xterm-256color', ...options.env } },
    null,
  );
  const socket = await openExecSocket(cluster, { pod, command, stdin: true, tty: true });
  socket.resize(options.cols, options.rows);
  const dataListeners = new Set<(chunk: Buffer) => void>();
  const exitListeners = new Set<(exit: { exitCode: number | null }) => void>();
  // With a terminal, the wrapper's pid line arrives on the terminal: keep it off the screen.
  const screen = new PidLineFilter(PID_MARKER, (chunk) => {
    for (const listener of dataListeners) listener(chunk);
  });
  socket.onOutput((_channel, data) => screen.push(data));
  let exit: { exitCode: number | null } | null = null;
  void socket.done.then((status) => {
    screen.flush();
    exit = { exitCode: status ? exitCodeOf(status) : null };
    for (const listener of exitListeners) listener(exit);
  });
  const subscribe = <T>(set: Set<T>, listener: T): Disposable => {
    set.add(listener);
    return { dispose: () => set.delete(listener) };
  };
  return {
    write: (data) => socket.writeStdin(typeof data === 'string' ? Buffer.from(data, 'utf8') : data),
    resize: (cols, rows) => socket.resize(cols, rows),
    onData: (listener) => subscribe(dataListeners, listener),
    onExit: (listener) => {
      if (exit) {
        const done = exit;
        queueMicrotask(() => listener(done));
      }
      return subscribe(exitListeners, listener);
    },
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    close: () => socket.close(),
  };
}
