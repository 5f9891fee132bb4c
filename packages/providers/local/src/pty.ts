import type { Disposable, PtyStream } from '@sandcast/provider-sdk';
import * as nodePty from 'node-pty';

/** A node-pty terminal as the contract's PtyStream; `onExit` fires once, with the command's exit code. */
export function ptyStream(params: {
  file: string;
  args: string[];
  env: Record<string, string>;
  cols: number;
  rows: number;
  onClose: () => void;
}): PtyStream {
  const term = nodePty.spawn(params.file, params.args, { name: 'xterm-256color', cols: params.cols, rows: params.rows, env: params.env });
  let exited = false;
  const exitListeners = new Set<(exit: { exitCode: number | null; signal?: string | undefined }) => void>();
  term.onExit(({ exitCode, signal }) => {
    exited = true;
    const exit = { exitCode: signal ? null : exitCode, signal: signal ? String(signal) : undefined };
    for (const listener of exitListeners) listener(exit);
    params.onClose();
  });
  const disposable = (fn: () => void): Disposable => ({ dispose: fn });
  return {
    // After exit node-pty would write to a closed file descriptor, which the process may have reused.
    write: (data) => {
      if (!exited) term.write(typeof data === 'string' ? data : data.toString('utf8'));
    },
    resize: (cols, rows) => {
      if (!exited) term.resize(cols, rows);
    },
    onData: (listener) => {
      const sub = term.onData((text) => listener(Buffer.from(text, 'utf8')));
      return disposable(() => sub.dispose());
    },
    onExit: (listener) => {
      exitListeners.add(listener);
      return disposable(() => exitListeners.delete(listener));
    },
    pause: () => term.pause(),
    resume: () => term.resume(),
    close: () => {
      if (!exited) term.kill('SIGKILL');
    },
  };
}
