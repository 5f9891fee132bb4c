import type { IncomingMessage } from 'node:http';
import { ProviderError } from '@sandcast/provider-sdk';
import WebSocket from 'ws';
import type { Cluster } from './cluster.ts';
import { PROVIDER_ID } from './config.ts';
import { CONTAINER } from './manifests.ts';

/** The exec subprotocols, newest first: v5 can half-close stdin; v4 cannot. */
const CHANNEL_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;

const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

export interface ExecStatus {
  status?: string;
  message?: string;
  reason?: string;
  details?: { causes?: Array<{ reason?: string; message?: string }> };
}

/** The exit code a pods/exec Status reports (v4 and later), or null when it names none. */
export function exitCodeOf(status: ExecStatus): number | null {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const code = Number(cause?.message);
  return Number.isInteger(code) ? code : null;
}

/** An open pods/exec session. Output arrives per channel; `pause` stops reading the socket. */
export interface ExecSocket {
  readonly protocol: (typeof CHANNEL_PROTOCOLS)[number];
  onOutput(listener: (channel: 'stdout' | 'stderr', data: Buffer) => void): void;
  /** Settles when the session ends: the Status the error channel carried, or null when the socket closed without one. */
  readonly done: Promise<ExecStatus | null>;
  writeStdin(data: Buffer): void;
  /** Sends stdin and resolves once the socket took it: piping with this is piping with backpressure. */
  writeStdinAndWait(data: Buffer): Promise<void>;
  /** Half-closes stdin (v5 only; v4 callers bound stdin themselves). */
  closeStdin(): void;
  resize(cols: number, rows: number): void;
  pause(): void;
  resume(): void;
  close(): void;
}

export interface ExecSocketRequest {
  pod: string;
  command: string[];
  stdin: boolean;
  tty: boolean;
}

async function refusal(response: IncomingMessage, pod: string): Promise<ProviderError> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  let message = Buffer.concat(chunks).toString('utf8').slice(0, 500);
  try {
    message = (JSON.parse(message) as { message?: string }).message ?? message;
  } catch {
    // not a Status: keep the text
  }
  const status = response.statusCode ?? 0;
  if (status === 404)
    return new ProviderError({ provider: PROVIDER_ID, code: 'not_found', message: `sandbox pod ${pod} does not exist (${message})` });
  if (status === 400 || status === 409) {
    return new ProviderError({
      provider: PROVIDER_ID,
      code: 'not_running',
      message: `sandbox pod ${pod} is not running (${message}); recreate the sandbox`,
    });
  }
  return new ProviderError({
    provider: PROVIDER_ID,
    code: status === 401 || status === 403 ? 'unavailable' : 'backend',
    message: `exec into ${pod} refused: HTTP ${status} ${message}`,
  });
}

/**
 * Opens pods/exec over a WebSocket, offering v5 then v4. Every frame is one channel byte and its
 * payload. Backpressure: the caller pauses the socket, which stops reading TCP, which stops the
 * kubelet and, in turn, the command at its next write.
 */
export async function openExecSocket(cluster: Cluster, request: ExecSocketRequest): Promise<ExecSocket> {
  const query = new URLSearchParams();
  for (const part of request.command) query.append('command', part);
  query.set('container', CONTAINER);
  query.set('stdin', String(request.stdin));
  query.set('stdout', 'true');
  query.set('stderr', String(!request.tty));
  query.set('tty', String(request.tty));
  const base = cluster.server.replace(/^http/, 'ws').replace(/\/$/, '');
  const url = `${base}/api/v1/namespaces/${encodeURIComponent(cluster.namespace)}/pods/${encodeURIComponent(request.pod)}/exec?${query}`;
  const options: WebSocket.ClientOptions & { headers?: Record<string, string> } = {};
  await cluster.config.applyToHTTPSOptions(options);
  const ws = new WebSocket(url, [...CHANNEL_PROTOCOLS], options);

  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, response) => {
      void refusal(response, request.pod).then(reject, reject);
    });
    ws.once('error', (error) =>
      reject(
        new ProviderError({
          provider: PROVIDER_ID,
          code: 'unavailable',
          retryable: true,
          message: `could not open exec into ${request.pod} at ${cluster.server}: ${error.message}`,
          cause: error,
        }),
      ),
    );
  });
  const protocol = ws.protocol as ExecSocket['protocol'];
  if (!CHANNEL_PROTOCOLS.includes(protocol)) {
    ws.close();
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'unavailable',
      message: `the cluster at ${cluster.server} speaks exec protocol "${protocol || 'none'}"; Sandcast needs v5.channel.k8s.io or v4.channel.k8s.io (Kubernetes 1.4 or later)`,
    });
  }

  const listeners: Array<(channel: 'stdout' | 'stderr', data: Buffer) => void> = [];
  let status: ExecStatus | null = null;
  ws.on('message', (data: Buffer) => {
    if (data.length === 0) return;
    const channel = data[0];
    const payload = data.subarray(1);
    if (channel === CHANNEL.stdout || channel === CHANNEL.stderr) {
      for (const listener of listeners) listener(channel === CHANNEL.stdout ? 'stdout' : 'stderr', payload);
    } else if (channel === CHANNEL.error && payload.length > 0) {
      try {
        status = JSON.parse(payload.toString('utf8')) as ExecStatus;
      } catch {
        status = { status: 'Failure', message: payload.toString('utf8') };
      }
    }
  });
  const done = new Promise<ExecStatus | null>((resolve) => {
    ws.once('close', () => resolve(status));
  });
  const send = (channel: number, payload: Buffer) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(Buffer.concat([Buffer.from([channel]), payload]));
  };

  return {
    protocol,
    onOutput: (listener) => {
      listeners.push(listener);
    },
    done,
    writeStdin: (data) => send(CHANNEL.stdin, data),
    writeStdinAndWait: (data) =>
      new Promise<void>((resolve, reject) => {
        if (ws.readyState !== WebSocket.OPEN) {
          reject(
            new ProviderError({ provider: PROVIDER_ID, code: 'backend', message: `exec into ${request.pod} closed while sending input` }),
          );
          return;
        }
        ws.send(Buffer.concat([Buffer.from([CHANNEL.stdin]), data]), (error) => (error ? reject(error) : resolve()));
      }),
    closeStdin: () => {
      if (protocol === 'v5.channel.k8s.io') send(CHANNEL.close, Buffer.from([CHANNEL.stdin]));
    },
    resize: (cols, rows) => send(CHANNEL.resize, Buffer.from(JSON.stringify({ Width: cols, Height: rows }))),
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    close: () => ws.terminate(),
  };
}
