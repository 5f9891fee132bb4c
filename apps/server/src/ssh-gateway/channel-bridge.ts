import type { PtyStream } from '@sandcast/provider-sdk';
import type ssh2 from 'ssh2';
import type { Guard } from './connection-guard.ts';
import { sshExitOf } from './exit-signal.ts';

/** Printed by the exec wrapper once the PTY is set up; everything before it is the wrapper's. */
const EXEC_READY_MARKER = '\u001eSANDCAST-EXEC-READY\u001e';
/**
 * Runs an exec request without a client PTY through the provider's PTY: no echo and no `\r\n`
 * translation, so output reads as a plain pipe would. Canonical mode stays on, so end of input
 * (Ctrl-D) still reaches the command. stdout and stderr arrive together on stdout.
 */
export const EXEC_WRAPPER = `stty -echo -onlcr 2>/dev/null; printf '${EXEC_READY_MARKER.replaceAll('\u001e', '\\036')}'; exec sh -c "$1"`;

/** Tells the client how the PTY ended: exit-status, or exit-signal with a name SSH knows. */
function reportExit(channel: ssh2.ServerChannel, exit: { exitCode: number | null; signal?: string | undefined }): void {
  const report = sshExitOf(exit);
  if (report && 'signal' in report) channel.exit(report.signal, false, '');
  else if (report) channel.exit(report.status);
}

/**
 * Bridges a channel to a PTY that is still being opened. The channel is accepted at once because
 * clients send input and end-of-input right after the request, before the PTY exists; that is
 * held and delivered when the PTY (and, for plain exec, its wrapper) is ready. A full channel
 * pauses the PTY until it drains. Every callback runs under the connection's guard: a throw ends
 * this connection, never the server.
 */
export function bridgeChannel(
  channel: ssh2.ServerChannel,
  opening: Promise<PtyStream>,
  options: { stripUntilMarker: boolean; guard: Guard },
): void {
  const { guard } = options;
  let pty: PtyStream | null = null;
  let ready = false;
  let closed = false;
  let eofPending = false;
  const held: Buffer[] = [];
  // A write after the client went away surfaces as an 'error' on the channel; without a listener
  // that would be an uncaught exception.
  channel.on('error', () => undefined);
  channel.stderr.on('error', () => undefined);
  channel.on(
    'data',
    guard('channel input', (input: Buffer) => {
      if (pty && ready) pty.write(input);
      else held.push(input);
    }),
  );
  // End of input: in canonical mode a ^D at the start of a line is end-of-file for the reader.
  channel.on(
    'end',
    guard('channel end', () => {
      if (!options.stripUntilMarker) return;
      if (pty && ready) pty.write('\u0004');
      else eofPending = true;
    }),
  );
  channel.on(
    'close',
    guard('channel close', () => {
      closed = true;
      held.length = 0;
      pty?.close();
    }),
  );
  opening.then(
    guard('PTY open', (stream: PtyStream) => {
      if (closed) return stream.close();
      pty = stream;
      const flush = () => {
        ready = true;
        for (const input of held.splice(0)) stream.write(input);
        if (eofPending) stream.write('\u0004');
      };
      if (!options.stripUntilMarker) flush();
      let head = '';
      stream.onData(
        guard('PTY output', (chunk: Buffer) => {
          if (closed) return;
          let data = chunk;
          if (!ready) {
            head += chunk.toString('latin1');
            const at = head.indexOf(EXEC_READY_MARKER);
            if (at < 0) return;
            data = Buffer.from(head.slice(at + EXEC_READY_MARKER.length), 'latin1');
            head = '';
            flush();
            if (data.length === 0) return;
          }
          if (!channel.write(data)) {
            stream.pause();
            channel.once(
              'drain',
              guard('channel drain', () => stream.resume()),
            );
          }
        }),
      );
      stream.onExit(
        guard('PTY exit', (exit: { exitCode: number | null; signal?: string | undefined }) => {
          if (closed) return;
          reportExit(channel, exit);
          channel.end();
        }),
      );
    }),
    guard('PTY open failure', (error: Error) => {
      if (closed) return;
      channel.stderr.write(`sandcast: ${error.message}\r\n`);
      channel.exit(1);
      channel.end();
    }),
  );
}
