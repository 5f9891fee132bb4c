import { isUtf8 } from 'node:buffer';
import type { ExecOutputFrame } from '@sandcast/contracts';
import { type ExecChunk, type ExecStreamName, utf8Boundary } from '@sandcast/provider-sdk';

/**
 * Turns output chunks into `stdout`/`stderr` frames. A chunk boundary may split a multi-byte
 * character: the incomplete tail waits for the next chunk of the same stream. Bytes that are not
 * valid UTF-8 travel as base64, so concatenating every frame's bytes gives exactly the output.
 */
export class ExecFrameEncoder {
  private readonly carry: Record<ExecStreamName, Buffer> = { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };
  readonly totalBytes: Record<ExecStreamName, number> = { stdout: 0, stderr: 0 };

  push(chunk: ExecChunk): ExecOutputFrame[] {
    this.totalBytes[chunk.stream] += chunk.data.length;
    const pending = this.carry[chunk.stream];
    const bytes = pending.length > 0 ? Buffer.concat([pending, chunk.data]) : chunk.data;
    const cut = utf8Boundary(bytes);
    this.carry[chunk.stream] = Buffer.from(bytes.subarray(cut));
    return cut > 0 ? [frameOf(chunk.stream, bytes.subarray(0, cut))] : [];
  }

  /** What is left at the end: a truncated character can only go as bytes. */
  flush(): ExecOutputFrame[] {
    const frames: ExecOutputFrame[] = [];
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.carry[stream].length > 0) frames.push(frameOf(stream, this.carry[stream]));
      this.carry[stream] = Buffer.alloc(0);
    }
    return frames;
  }
}

function frameOf(stream: ExecStreamName, bytes: Buffer): ExecOutputFrame {
  if (isUtf8(bytes)) return { type: stream, data: bytes.toString('utf8') };
  return { type: stream, data: bytes.toString('base64'), encoding: 'base64' };
}
