/**
 * Output of a terminal, an SSH channel or a process, collected as text. `waitFor` resolves on the
 * chunk that makes the text match — it waits for that event, it does not poll — and rejects after
 * `timeoutMs` with what was seen, so a test that never sees its output fails with a reason.
 */
export class TextCollector {
  private text = '';
  private readonly decoder = new TextDecoder();
  private readonly listeners = new Set<() => void>();

  push(chunk: Uint8Array | string): void {
    this.text += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    for (const listener of [...this.listeners]) listener();
  }

  get value(): string {
    return this.text;
  }

  get length(): number {
    return this.text.length;
  }

  waitFor(pattern: RegExp | string, options: { timeoutMs?: number; from?: number } = {}): Promise<string> {
    const from = options.from ?? 0;
    const matches = () => {
      const seen = this.text.slice(from);
      return (typeof pattern === 'string' ? seen.includes(pattern) : pattern.test(seen)) ? seen : null;
    };
    const now = matches();
    if (now !== null) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const check = () => {
        const seen = matches();
        if (seen === null) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(seen);
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`output never matched ${pattern}; got: ${JSON.stringify(this.text.slice(from).slice(-2000))}`));
      }, options.timeoutMs ?? 15_000);
      this.listeners.add(check);
    });
  }
}
