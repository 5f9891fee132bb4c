import { sha256 } from './manifest.ts';
import type { BlobStore } from './types.ts';

/**
 * Where a capture's bytes go: each chunk is hashed, and written only when the blob store does not
 * hold it yet. Counts what this capture stored for the first time.
 */
export class ChunkSink {
  readonly newChunks: string[] = [];
  storedBytes = 0;
  totalBytes = 0;
  /** Chunks stored or being stored during this capture (a chunk repeated in the tree costs one lookup). */
  private readonly known = new Map<string, Promise<void>>();

  constructor(private readonly blobs: BlobStore) {}

  async add(data: Buffer): Promise<string> {
    const digest = sha256(data);
    this.totalBytes += data.length;
    let stored = this.known.get(digest);
    if (!stored) {
      stored = this.store(digest, data);
      this.known.set(digest, stored);
    }
    await stored;
    return digest;
  }

  private async store(digest: string, data: Buffer): Promise<void> {
    if (await this.blobs.has(digest)) return;
    await this.blobs.put(digest, data);
    this.newChunks.push(digest);
    this.storedBytes += data.length;
  }

  /** A file reused from the previous manifest: counted in the workspace's bytes, nothing read. */
  reuse(size: number): void {
    this.totalBytes += size;
  }
}

/** Runs `work` over `items`, at most `limit` at a time. */
export async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Cuts a byte stream into fixed-size chunks (decision 0022): whole chunks go to the sink as they
 * fill; `end()` sends the remainder.
 */
export class FixedChunker {
  readonly chunks: string[] = [];
  size = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly sink: ChunkSink,
    private readonly chunkBytes: number,
  ) {}

  async push(data: Buffer): Promise<void> {
    this.size += data.length;
    let rest = data;
    while (this.pendingBytes + rest.length >= this.chunkBytes) {
      const take = this.chunkBytes - this.pendingBytes;
      this.pending.push(rest.subarray(0, take));
      rest = rest.subarray(take);
      const chunk = Buffer.concat(this.pending);
      this.pending = [];
      this.pendingBytes = 0;
      this.chunks.push(await this.sink.add(chunk));
    }
    if (rest.length > 0) {
      // Copied: the caller may reuse its buffer for the next read.
      this.pending.push(Buffer.from(rest));
      this.pendingBytes += rest.length;
    }
  }

  async end(): Promise<string[]> {
    if (this.pendingBytes > 0) this.chunks.push(await this.sink.add(Buffer.concat(this.pending)));
    this.pending = [];
    this.pendingBytes = 0;
    return this.chunks;
  }
}
