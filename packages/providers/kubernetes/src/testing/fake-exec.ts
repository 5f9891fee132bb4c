import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { WebSocket } from 'ws';

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;
const CLOSE = 255;
/** Output frames in flight before the fake stops reading the command (the kubelet's backpressure). */
const MAX_UNACKED_FRAMES = 8;

export interface ExecQuery {
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/**
 * One pods/exec session, as the kubelet serves it: channel-prefixed binary frames (stdin 0,
 * stdout 1, stderr 2, the error channel 3 with a Status, resize 4, and under v5 the close frame
 * 255 that half-closes stdin). Incoming frames are handled in order; output is read from the
 * command only as fast as the client takes it.
 */
export async function serveExec(docker: Docker, containerId: string, query: ExecQuery, ws: WebSocket, record: (problem: string) => void) {
  // Frames the client sends while the command starts wait in order behind it.
  let started: (value: { exec: Docker.Exec; stream: Duplex }) => void = () => undefined;
  let queue: Promise<unknown> = new Promise<{ exec: Docker.Exec; stream: Duplex }>((resolve) => {
    started = resolve;
  });
  const ready = queue as Promise<{ exec: Docker.Exec; stream: Duplex }>;
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    queue = queue.then(async () => {
      const { exec, stream } = await ready;
      if (!isBinary || data.length === 0) {
        record(`exec: a text or empty frame arrived (${data.length} bytes)`);
        return;
      }
      const channel = data[0];
      const payload = data.subarray(1);
      if (channel === STDIN && query.stdin) stream.write(payload);
      else if (channel === RESIZE) {
        const size = JSON.parse(payload.toString('utf8')) as { Width: number; Height: number };
        if (query.tty) await exec.resize({ w: size.Width, h: size.Height });
      } else if (channel === CLOSE && ws.protocol === 'v5.channel.k8s.io' && payload[0] === STDIN) stream.end();
      else record(`exec: unexpected frame on channel ${channel} (${ws.protocol})`);
    });
  });
  const exec = await docker.getContainer(containerId).exec({
    Cmd: query.command,
    AttachStdin: query.stdin,
    AttachStdout: query.stdout,
    AttachStderr: query.stderr,
    Tty: query.tty,
  });
  const stream = (await exec.start({ hijack: true, stdin: query.stdin, Tty: query.tty })) as Duplex;
  started({ exec, stream });

  let unacked = 0;
  let paused = false;
  const send = (channel: number, payload: Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    unacked++;
    ws.send(Buffer.concat([Buffer.from([channel]), payload]), () => {
      unacked--;
      if (paused && unacked <= MAX_UNACKED_FRAMES / 2) {
        paused = false;
        stream.resume();
      }
    });
    if (!paused && unacked >= MAX_UNACKED_FRAMES) {
      paused = true;
      stream.pause();
    }
  };

  let pending: Buffer = Buffer.alloc(0);
  stream.on('data', (chunk: Buffer) => {
    if (query.tty) {
      send(STDOUT, chunk);
      return;
    }
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const length = pending.readUInt32BE(4);
      if (pending.length < 8 + length) break;
      send(pending[0] === 2 ? STDERR : STDOUT, Buffer.from(pending.subarray(8, 8 + length)));
      pending = pending.subarray(8 + length);
    }
  });

  ws.on('close', () => stream.destroy());

  await new Promise<void>((resolve) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', () => resolve());
  });
  let exitCode: number | null = null;
  for (let attempt = 0; attempt < 40 && exitCode === null; attempt++) {
    const info = await exec.inspect().catch(() => null);
    if (info && !info.Running) exitCode = info.ExitCode ?? null;
    else await new Promise((r) => setTimeout(r, 25));
  }
  const status =
    exitCode === 0
      ? { metadata: {}, status: 'Success' }
      : {
          metadata: {},
          status: 'Failure',
          message: `command terminated with non-zero exit code: exit status ${exitCode}`,
          reason: 'NonZeroExitCode',
          details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
        };
  send(ERROR, Buffer.from(JSON.stringify(status)));
  ws.close(1000);
}
