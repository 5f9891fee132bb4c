import type { Disposable, PtyStream } from '@sandcast/provider-sdk';
import * as nodePty from 'node-pty';

/** Adapts a node-pty process to the contract's PtyStream. */
export function spawnPty(options: { command: string[]; cwd: string; env: Record<string, string>; cols: number; rows: number }): PtyStream {
  const [file, ...args] = options.command;
  const child = nodePty.spawn(file ?? 'sh', args, {
    name: 'xterm-256color',
    cols: options.cols,
    rows: options.rows,
    cwd: options.cwd,
    env: options.env,
    encoding: null,
  } as nodePty.IPtyForkOptions);
  let closed = false;
  return {
    write: (data) => {
      if (!closed) child.write(typeof data === 'string' ? data : data.toString('utf8'));
    },
    resize: (cols, rows) => {
      if (!closed) child.resize(cols, rows);
    },
    onData: (listener): Disposable => {
      const sub = child.onData((chunk: string | Buffer) => listener(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)));
      return { dispose: () => sub.dispose() };
    },
    onExit: (listener): Disposable => {
      const sub = child.onExit(({ exitCode, signal }) => {
        closed = true;
        // node-pty reports a signal's death as exit code 0 plus the signal's number.
        listener({ exitCode: signal ? null : exitCode, signal: signal ? String(signal) : undefined });
      });
      return { dispose: () => sub.dispose() };
    },
    pause: () => child.pause(),
    resume: () => child.resume(),
    close: () => {
      if (closed) return;
      closed = true;
      child.kill('SIGHUP');
    },
  };
}
