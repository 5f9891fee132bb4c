import { type ExecExitFrame, type ExecOutputFrame, type ExecStreamFrame, ExecStreamFrameSchema } from '@sandcast/contracts';
import { SandcastApiError } from './errors.ts';

export type ExecOutputListener = (text: string, bytes: Uint8Array) => void;

/** The bytes an output frame carries (its text as UTF-8, or its base64 decoded). */
export function frameBytes(frame: ExecOutputFrame): Uint8Array {
  if (frame.encoding !== 'base64') return new TextEncoder().encode(frame.data);
  const binary = atob(frame.data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * A command running in a sandbox, its output arriving as it is produced
 * (`client.sandboxes.execStream`, `client.customImages.execStream`).
 *
 * Iterate it for the frames (`stdout`, `stderr`, then one `exit`), or register `onStdout` /
 * `onStderr` and await `done()` for the exit frame. Reading slowly slows the command down (the
 * server passes the backpressure on); `cancel()` ends the request and the server kills the
 * command's process tree. An `error` frame throws `SandcastApiError`.
 */
export class ExecStream implements AsyncIterable<ExecStreamFrame> {
  private readonly listeners: { stdout: ExecOutputListener[]; stderr: ExecOutputListener[] } = { stdout: [], stderr: [] };
  private readonly decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  private started = false;

  constructor(
    private readonly open: () => Promise<Response>,
    private readonly controller: AbortController,
  ) {}

  /** Called with each piece of stdout (text decoded across frames, and the raw bytes). */
  onStdout(listener: ExecOutputListener): this {
    this.listeners.stdout.push(listener);
    return this;
  }

  onStderr(listener: ExecOutputListener): this {
    this.listeners.stderr.push(listener);
    return this;
  }

  /** Reads to the end, calling the output listeners, and resolves with the exit frame. */
  async done(): Promise<ExecExitFrame> {
    for await (const frame of this) if (frame.type === 'exit') return frame;
    throw new SandcastApiError({ status: 502, code: 'http_error', message: 'the exec stream ended without an exit frame' });
  }

  /** Stops reading; the server kills the command's process tree. */
  cancel(): void {
    this.controller.abort();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ExecStreamFrame> {
    if (this.started) throw new Error('an ExecStream can be read once');
    this.started = true;
    const response = await this.open();
    if (!response.body) throw new SandcastApiError({ status: response.status, code: 'http_error', message: 'the exec stream has no body' });
    const reader = response.body.getReader();
    const text = new TextDecoder();
    let pending = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        pending += done ? text.decode() : text.decode(value, { stream: true });
        let newline = pending.indexOf('\n');
        while (newline >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          if (line.trim()) {
            const frame = this.deliver(line);
            yield frame;
            if (frame.type === 'exit') return;
          }
          newline = pending.indexOf('\n');
        }
        if (done) break;
      }
      if (pending.trim()) yield this.deliver(pending);
    } finally {
      // Leaving early (break, cancel, an error) closes the request: the server stops the command.
      await reader.cancel().catch(() => undefined);
    }
  }

  private deliver(line: string): ExecStreamFrame {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new SandcastApiError({
        status: 502,
        code: 'http_error',
        message: `the exec stream sent a line that is not JSON: ${line.slice(0, 200)}`,
      });
    }
    const frame = ExecStreamFrameSchema.parse(json);
    switch (frame.type) {
      case 'stdout':
      case 'stderr': {
        const listeners = this.listeners[frame.type];
        if (listeners.length === 0) return frame;
        const bytes = frameBytes(frame);
        const decoded = this.decoders[frame.type].decode(bytes, { stream: true });
        for (const listener of listeners) listener(decoded, bytes);
        return frame;
      }
      case 'error':
        throw new SandcastApiError({ status: 502, ...frame.error });
      case 'exit':
        return frame;
      default: {
        const never: never = frame;
        return never;
      }
    }
  }
}
