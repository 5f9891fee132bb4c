/** Something a forwarded connection holds open: a socket, a stream to the sandbox. */
interface Closeable {
  destroy(): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * The connections forwarded to each open port right now (upgraded sockets, streaming answers), so
 * that closing the port or deleting the sandbox ends them at once rather than at their next request.
 */
export class PortConnections {
  private readonly open = new Map<string, Set<Closeable>>();

  private static key(sandboxId: string, port: number): string {
    return `${sandboxId}:${port}`;
  }

  /** Tracks `items` until each closes. */
  track(sandboxId: string, port: number, ...items: Closeable[]): void {
    const key = PortConnections.key(sandboxId, port);
    let set = this.open.get(key);
    if (!set) {
      set = new Set();
      this.open.set(key, set);
    }
    for (const item of items) {
      set.add(item);
      item.once('close', () => {
        set.delete(item);
        if (set.size === 0 && this.open.get(key) === set) this.open.delete(key);
      });
    }
  }

  /** Ends every connection to one port, or (no port) to every port of the sandbox. */
  closeAll(sandboxId: string, port?: number): void {
    for (const [key, set] of this.open) {
      if (port === undefined ? !key.startsWith(`${sandboxId}:`) : key !== PortConnections.key(sandboxId, port)) continue;
      for (const item of set) item.destroy();
    }
  }

  /** Ends every forwarded connection (the server is closing: upgraded sockets are not the HTTP server's to drain). */
  closeEverything(): void {
    for (const set of this.open.values()) for (const item of set) item.destroy();
  }
}
