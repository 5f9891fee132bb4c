/**
 * The exec agent's wire format (ADR 0030; native/sandcast-exec-agent.c is the other end). Each
 * frame: u32 length (little endian, counting what follows), u8 type, u32 exec id, payload.
 * Everything the agent sends is written by a process inside the sandbox: the decoder bounds what
 * it buffers, never throws, and reports a malformed stream once, after which it reads nothing more.
 */

export const HOST_FRAME = { spawn: 1, go: 2, stdin: 3, stdinEof: 4, kill: 5, pause: 6, resume: 7 } as const;
export const AGENT_FRAME = { ready: 64, started: 65, stdout: 66, stderr: 67, stdinAck: 68, exit: 69, failed: 70 } as const;

const HEADER = 9;
/** Largest payload the agent sends (its read size). */
export const MAX_AGENT_PAYLOAD = 64 * 1024;
/** Largest frame the agent accepts; a bigger spawn request runs the old way. */
export const MAX_HOST_PAYLOAD = 1024 * 1024;
/** Stdin the host sends ahead of the agent's acknowledgements, per command (the agent buffers at most 1 MiB). */
export const STDIN_WINDOW = 256 * 1024;
/** Largest stdin frame. */
export const STDIN_CHUNK = 64 * 1024;

export type AgentEvent =
  | { type: 'ready'; pid: number }
  | { type: 'started'; id: number; pid: number }
  | { type: 'stdout' | 'stderr'; id: number; data: Buffer }
  | { type: 'stdinAck'; id: number; bytes: number }
  | { type: 'exit'; id: number; code: number }
  | { type: 'failed'; id: number; message: string };

function frame(type: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(HEADER);
  header.writeUInt32LE(payload.length + 5, 0);
  header.writeUInt8(type, 4);
  header.writeUInt32LE(id, 5);
  return payload.length ? Buffer.concat([header, payload]) : header;
}

/**
 * The spawn request, or null when it cannot be sent: a NUL inside a string (a process cannot be
 * given one) or a request larger than the agent accepts. Either way the caller runs it the old way.
 */
export function spawnFrame(id: number, request: { cwd: string; command: string[]; env: Record<string, string> }): Buffer | null {
  const env = Object.entries(request.env).map(([key, value]) => `${key}=${value}`);
  const strings = [request.cwd, ...request.command, ...env];
  if (request.command.length === 0 || strings.some((s) => s.includes('\0'))) return null;
  const counts = Buffer.alloc(8);
  counts.writeUInt32LE(request.command.length, 0);
  counts.writeUInt32LE(env.length, 4);
  const payload = Buffer.concat([counts, ...strings.map((s) => Buffer.from(`${s}\0`, 'utf8'))]);
  return payload.length > MAX_HOST_PAYLOAD ? null : frame(HOST_FRAME.spawn, id, payload);
}

export const controlFrame = (type: (typeof HOST_FRAME)['go' | 'stdinEof' | 'kill' | 'pause' | 'resume'], id: number) => frame(type, id);
export const stdinFrame = (id: number, data: Buffer) => frame(HOST_FRAME.stdin, id, data);

/** Splits the agent's stdout into events. `onError` is called at most once; nothing is decoded after it. */
export class AgentDecoder {
  private pending: Buffer = Buffer.alloc(0);
  private broken = false;

  constructor(
    private readonly onEvent: (event: AgentEvent) => void,
    private readonly onError: (reason: string) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.broken) return;
    let buffer = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (buffer.length >= 4) {
      const length = buffer.readUInt32LE(0);
      if (length < 5 || length > MAX_AGENT_PAYLOAD + 5) {
        this.fail(`a frame of ${length} bytes`);
        return;
      }
      if (buffer.length < 4 + length) break;
      const type = buffer.readUInt8(4);
      const id = buffer.readUInt32LE(5);
      const payload = buffer.subarray(HEADER, 4 + length);
      buffer = buffer.subarray(4 + length);
      const event = decodeEvent(type, id, payload);
      if (typeof event === 'string') {
        this.fail(event);
        return;
      }
      this.onEvent(event);
      if (this.broken) return;
    }
    // Copied: a small remainder must not pin the large chunk it was cut from.
    this.pending = Buffer.from(buffer);
  }

  private fail(reason: string): void {
    this.broken = true;
    this.pending = Buffer.alloc(0);
    this.onError(`the exec agent sent ${reason}`);
  }
}

function decodeEvent(type: number, id: number, payload: Buffer): AgentEvent | string {
  const u32 = () => (payload.length === 4 ? payload.readUInt32LE(0) : null);
  switch (type) {
    case AGENT_FRAME.ready: {
      const pid = u32();
      return pid && id === 0 ? { type: 'ready', pid } : 'a malformed ready frame';
    }
    case AGENT_FRAME.started: {
      const pid = u32();
      return pid ? { type: 'started', id, pid } : 'a malformed started frame';
    }
    case AGENT_FRAME.stdout:
    case AGENT_FRAME.stderr:
      // Copied out of the read buffer: the output outlives it.
      return { type: type === AGENT_FRAME.stdout ? 'stdout' : 'stderr', id, data: Buffer.from(payload) };
    case AGENT_FRAME.stdinAck: {
      const bytes = u32();
      return bytes !== null && bytes <= STDIN_WINDOW ? { type: 'stdinAck', id, bytes } : 'a malformed stdin acknowledgement';
    }
    case AGENT_FRAME.exit: {
      const code = u32();
      return code !== null && code <= 255 ? { type: 'exit', id, code } : 'a malformed exit frame';
    }
    case AGENT_FRAME.failed:
      if (payload.length > 1024) return 'an oversized failure';
      return { type: 'failed', id, message: payload.toString('utf8').replace(/[^\x20-\x7e]/g, '?') };
    default:
      return `an unknown frame type ${type}`;
  }
}
