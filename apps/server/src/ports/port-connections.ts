/** Something a forwarded connection holds open: a socket, a stream to the sandbox. */
interface Closeable {
  destroy(): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * The connections forwarded to each open port right now (upgraded sockets, streaming answers), so
 * that closing the port, deleting the sandbox or ending the setup session ends them at once rather
 * than at their next request. Keyed by owner id: sandbox and setup session ids never collide (their
 * prefixes differ).
 */
export class PortConnections {
  private readonly open = new Map<string, Set<Closeable>>();

  private static key(ownerId: string, port: number): string {
    return `${ownerId}:${port}`;
  }

  /** Tracks `items` until each closes. */
  track(ownerId: string, port: number, ...items: Closeable[]): void {
    const key = PortConnections.key(ownerId, port);
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

  /** Ends every connection to one port, or (no port) to every port of the owner. */
  closeAll(ownerId: string, port?: number): void {
    for (const [key, set] of this.open) {
      if (port === undefined ? !key.startsWith(`${ownerId}:`) : key !== PortConnections.key(ownerId, port)) continue;
      for (const item of set) item.destroy();
    }
  }

  /** Ends every forwarded connection (the server is closing: upgraded sockets are not the HTTP server's to drain). */
  closeEverything(): void {
    for (const set of this.open.values()) for (const item of set) item.destroy();
  }
}
