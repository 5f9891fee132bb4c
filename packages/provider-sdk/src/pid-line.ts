/**
 * The pid-line wrapper of the providers that start commands through a remote exec (Docker,
 * Kubernetes): a shell prologue prints `<marker><pid>` as the first line, then the wrapper execs
 * the command, so the command keeps that pid (a process group when the runtime makes exec
 * processes session leaders) and a kill can reach it through a second exec. `PidLineFilter` takes
 * the line off the front of the stream again before anyone sees it.
 *
 * The stream is written inside the sandbox: a first line that is not the marker is passed through
 * untouched, and the filter never holds more than a short head before deciding.
 */

/** The longest head held while waiting for the first newline; a longer one is not a pid line. */
const MAX_HEAD = 64;

/** The shell that prints its own pid as `<marker><pid>` (on stderr when `toStderr`). */
export function pidLinePrologue(marker: string, options: { toStderr: boolean }): string {
  return `printf '${marker}%s\\n' "$$"${options.toStderr ? ' >&2' : ''}`;
}

/** `/bin/sh -c '<prologue>; exec "$@"' <name> <command…>`: the command runs with the printed pid. */
export function pidLineCommand(marker: string, options: { toStderr: boolean; name: string }, command: readonly string[]): string[] {
  return ['/bin/sh', '-c', `${pidLinePrologue(marker, options)}; exec "$@"`, options.name, ...command];
}

/** Strips the pid line from the front of a stream and reports the pid once it is seen. */
export class PidLineFilter {
  private head = '';
  private done = false;
  /** The pid from the marker line; null until it is seen, and for good when the first line was something else. */
  pid: number | null = null;
  constructor(
    private readonly marker: string,
    private readonly sink: (chunk: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.done) {
      this.sink(chunk);
      return;
    }
    this.head += chunk.toString('latin1');
    const newline = this.head.indexOf('\n');
    if (newline < 0 && this.head.length < MAX_HEAD) return;
    this.done = true;
    // A terminal ends the line with \r\n.
    const line = newline < 0 ? '' : this.head.slice(0, newline).replace(/\r$/, '');
    const marked = line.startsWith(this.marker);
    if (marked) this.pid = Number(line.slice(this.marker.length)) || null;
    const rest = Buffer.from(marked ? this.head.slice(newline + 1) : this.head, 'latin1');
    this.head = '';
    if (rest.length > 0) this.sink(rest);
  }

  /** Passes on a head that never reached a newline (the stream ended first). */
  flush(): void {
    if (!this.done && this.head.length > 0) this.sink(Buffer.from(this.head, 'latin1'));
    this.head = '';
    this.done = true;
  }
}
