/** Keeps the most recent `capacity` bytes of a stream, so a re-attaching terminal shows the screen. */
export class ReplayBuffer {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly capacity: number) {}

  push(chunk: Buffer): void {
    if (chunk.length >= this.capacity) {
      this.chunks = [Buffer.from(chunk.subarray(chunk.length - this.capacity))];
      this.size = this.capacity;
      return;
    }
    // Copied: the source may reuse its buffer after the listener returns.
    this.chunks.push(Buffer.from(chunk));
    this.size += chunk.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= this.capacity) this.size -= this.chunks.shift()!.length;
    if (this.size > this.capacity) {
      const excess = this.size - this.capacity;
      this.chunks[0] = this.chunks[0]!.subarray(excess);
      this.size = this.capacity;
    }
  }

  snapshot(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}
