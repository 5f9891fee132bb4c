import { Readable } from 'node:stream';

/** Default cap on the output an `exec` answer holds, per stream: 4 MiB. */
export const DEFAULT_EXEC_OUTPUT_MAX_BYTES = 4 * 1024 * 1024;

export type ExecStreamName = 'stdout' | 'stderr';

/** One piece of a command's output, as the provider read it. */
export interface ExecChunk {
  stream: ExecStreamName;
  data: Buffer;
}

export interface ExecExit {
  exitCode: number;
  timedOut: boolean;
}

/**
 * A running command (`SandboxProvider.execStream`). `output` is an object-mode Readable of
 * `ExecChunk`s in the order they were read; while nobody reads it the provider stops reading the
 * command's pipes, so a command that writes faster than its reader blocks instead of filling memory.
 */
export interface ExecProcess {
  readonly output: Readable;
  /** Settles once the command has exited and its output has been read to the end. */
  readonly exit: Promise<ExecExit>;
  /** Kills the command's whole process tree (the reader went away). Idempotent; `exit` still settles. */
  kill(): Promise<void>;
}

/** Where an `ExecOutput` pauses and resumes reading (the command's pipes, or one attach stream). */
export interface ExecSource {
  pause(): void;
  resume(): void;
}

/** How many chunks the output holds before it pauses its source (each at most a pipe read, ~64 KiB). */
const OUTPUT_HIGH_WATER_CHUNKS = 16;

/**
 * The output side of an `ExecProcess`, shared by every provider: `push` from the source's data
 * events, `end` when the source is done. It pauses the source when its reader falls behind and
 * resumes it when the reader asks for more.
 */
export class ExecOutput {
  readonly readable: Readable;
  private readonly sources: ExecSource[];
  private paused = false;
  private discarding = false;

  constructor(...sources: ExecSource[]) {
    this.sources = sources;
    this.readable = new Readable({
      objectMode: true,
      highWaterMark: OUTPUT_HIGH_WATER_CHUNKS,
      read: () => {
        if (!this.paused) return;
        this.paused = false;
        for (const source of this.sources) source.resume();
      },
    });
  }

  push(stream: ExecStreamName, data: Buffer): void {
    if (data.length === 0 || this.discarding || this.readable.destroyed) return;
    const chunk: ExecChunk = { stream, data };
    if (!this.readable.push(chunk) && !this.paused) {
      this.paused = true;
      for (const source of this.sources) source.pause();
    }
  }

  /**
   * Nobody will read the rest (the command is being killed): keep the sources flowing and drop
   * what they send, so the process can finish and be reaped. What was already queued stays readable.
   */
  discard(): void {
    this.discarding = true;
    this.paused = false;
    for (const source of this.sources) source.resume();
  }

  end(): void {
    if (!this.readable.destroyed) this.readable.push(null);
  }
}

/** What `collectExecOutput` keeps of each stream. */
export interface CollectedExec {
  exitCode: number;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Whether the stream wrote more than the cap; the rest was read and dropped. */
  truncated: { stdout: boolean; stderr: boolean };
  /** Bytes the command wrote to each stream, counted past the cap too. */
  totalBytes: { stdout: number; stderr: number };
}

/** Keeps the first `max` bytes of a stream and counts the rest. */
class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  total = 0;
  constructor(private readonly max: number) {}
  push(data: Buffer): void {
    this.total += data.length;
    const room = this.max - this.kept;
    if (room <= 0) return;
    const part = data.length > room ? Buffer.from(data.subarray(0, room)) : data;
    this.chunks.push(part);
    this.kept += part.length;
  }
  get truncated(): boolean {
    return this.total > this.kept;
  }
  text(): string {
    const bytes = Buffer.concat(this.chunks);
    // A cut can split a multi-byte character; drop the partial one rather than answer U+FFFD.
    return (this.truncated ? bytes.subarray(0, utf8Boundary(bytes)) : bytes).toString('utf8');
  }
}

/** The length of `bytes` without a trailing, incomplete UTF-8 sequence. */
export function utf8Boundary(bytes: Uint8Array): number {
  const end = bytes.length;
  // Walk back over at most three continuation bytes to the sequence's lead byte.
  for (let i = end - 1; i >= 0 && i >= end - 4; i--) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) === 0x80) continue;
    // 0xf8 and up never start a sequence: nothing to wait for.
    const need = byte >= 0xf8 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return end - i < need ? i : end;
  }
  return end;
}

/**
 * Reads a command's output to the end, keeping at most `maxOutputBytes` per stream, and waits for
 * its exit. Memory stays bounded by the cap however much the command writes.
 */
export async function collectExecOutput(
  process: ExecProcess,
  options: { maxOutputBytes?: number | undefined } = {},
): Promise<CollectedExec> {
  const max = options.maxOutputBytes ?? DEFAULT_EXEC_OUTPUT_MAX_BYTES;
  const stdout = new CappedBuffer(max);
  const stderr = new CappedBuffer(max);
  try {
    for await (const chunk of process.output as AsyncIterable<ExecChunk>) (chunk.stream === 'stderr' ? stderr : stdout).push(chunk.data);
  } catch (error) {
    await process.kill();
    throw error;
  }
  const exit = await process.exit;
  return {
    exitCode: exit.exitCode,
    timedOut: exit.timedOut,
    stdout: stdout.text(),
    stderr: stderr.text(),
    truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
    totalBytes: { stdout: stdout.total, stderr: stderr.total },
  };
}
