import {
  collectExecOutput,
  type ExecExit,
  ExecOutput,
  type ExecProcess,
  type ExecRequest,
  type ExecResult,
  PidLineFilter,
  ProviderError,
  pidLinePrologue,
} from '@sandcast/provider-sdk';
import type { Cluster } from './cluster.ts';
import { PROVIDER_ID, WORKDIR } from './config.ts';
import { exitCodeOf, openExecSocket } from './exec-socket.ts';

const DEFAULT_EXEC_TIMEOUT_MS = 60_000;
/** How long a killed command gets to end its session before the socket is dropped. */
const DRAIN_AFTER_KILL_MS = 3_000;
/** How long a kill waits for the wrapper's pid line when the command was killed very early. */
const PID_WAIT_MS = 2_000;

/**
 * pods/exec has no working directory, environment or process group of its own: every command runs
 * under this wrapper. It prints its pid on stderr (stripped again), changes directory, exports the
 * environment and runs the command; with stdin it reads exactly the bytes sent, so the command
 * sees end of input even over v4, which cannot half-close a stream.
 * Arguments: cwd, stdin length or `-`, NAME=VALUE…, `--`, the command.
 */
export const PID_MARKER = 'sandcast-exec-pid=';
const WRAPPER = [
  pidLinePrologue(PID_MARKER, { toStderr: true }),
  'cd "$1" || exit 126',
  'n=$2; shift 2',
  'while [ "$1" != "--" ]; do export "$1"; shift; done; shift',
  'if [ "$n" = - ]; then exec "$@"; fi',
  'head -c "$n" | "$@"',
].join('\n');

/**
 * Kills a command's whole tree from a second exec: its process group (when the runtime made the
 * wrapper a session leader) and every descendant found through /proc (when it did not).
 */
const KILL_TREE = [
  'tree() { echo "$1"; for s in /proc/[0-9]*/stat; do read -r c x1 x2 pp rest < "$s" 2>/dev/null || continue; [ "$pp" = "$1" ] && tree "$c"; done; }',
  'pids=$(tree "$1")',
  'kill -s KILL -- "-$1" 2>/dev/null',
  'kill -s KILL $pids 2>/dev/null',
  'true',
].join('\n');

export function wrapCommand(request: ExecRequest, stdinBytes: number | null): string[] {
  const env = Object.entries(request.env ?? {}).map(([key, value]) => `${key}=${value}`);
  return [
    '/bin/sh',
    '-c',
    WRAPPER,
    'sandcast-exec',
    request.cwd ?? WORKDIR,
    stdinBytes === null ? '-' : String(stdinBytes),
    ...env,
    '--',
    ...request.command,
  ];
}

async function killTree(cluster: Cluster, pod: string, pid: number): Promise<void> {
  const socket = await openExecSocket(cluster, {
    pod,
    command: ['/bin/sh', '-c', KILL_TREE, 'sandcast-kill', String(pid)],
    stdin: false,
    tty: false,
  });
  await socket.done;
}

/**
 * Starts a command in the pod and streams its output with backpressure: while `output` is not
 * read the socket is paused, so the command blocks on its next write. A timeout or `kill()` kills
 * the whole tree through a second exec and reports 137.
 */
export async function startExec(cluster: Cluster, pod: string, request: ExecRequest): Promise<ExecProcess> {
  if (request.command.length === 0)
    throw new ProviderError({ provider: PROVIDER_ID, code: 'invalid_config', message: 'exec needs a command' });
  const stdin = request.stdin === undefined ? null : typeof request.stdin === 'string' ? Buffer.from(request.stdin, 'utf8') : request.stdin;
  const socket = await openExecSocket(cluster, {
    pod,
    command: wrapCommand(request, stdin?.length ?? null),
    stdin: stdin !== null,
    tty: false,
  });
  const output = new ExecOutput(socket);
  const marker = new PidLineFilter(PID_MARKER, (chunk) => output.push('stderr', chunk));
  socket.onOutput((channel, data) => {
    if (channel === 'stderr') marker.push(data);
    else output.push('stdout', data);
  });
  if (stdin !== null) {
    if (stdin.length > 0) socket.writeStdin(stdin);
    socket.closeStdin();
  }

  let timedOut = false;
  let killed = false;
  let killing: Promise<void> | null = null;
  const kill = () => {
    killing ??= (async () => {
      for (let waited = 0; marker.pid === null && waited < PID_WAIT_MS; waited += 20) await new Promise((r) => setTimeout(r, 20));
      if (marker.pid !== null) await killTree(cluster, pod, marker.pid).catch(() => undefined);
      const drain = setTimeout(() => socket.close(), DRAIN_AFTER_KILL_MS);
      void socket.done.then(() => clearTimeout(drain));
    })();
    return killing;
  };
  const timer = setTimeout(() => {
    timedOut = true;
    void kill();
  }, request.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS);

  const exit = (async (): Promise<ExecExit> => {
    const status = await socket.done;
    clearTimeout(timer);
    marker.flush();
    output.end();
    const code = status ? exitCodeOf(status) : null;
    if (code !== null) return { exitCode: timedOut || killed ? (code === 0 ? 137 : code) : code, timedOut };
    if (timedOut || killed) return { exitCode: 137, timedOut };
    throw new ProviderError({
      provider: PROVIDER_ID,
      code: 'backend',
      message: `the command in ${pod} ended without an exit status${status?.message ? `: ${status.message}` : ''}`,
    });
  })();
  // A caller that only streams may never await `exit`; a failure then ends `output` with it.
  exit.catch((error: unknown) => output.readable.destroy(error as Error));

  return {
    output: output.readable,
    exit,
    kill: async () => {
      killed = true;
      clearTimeout(timer);
      output.discard();
      await kill();
    },
  };
}

export async function runExec(cluster: Cluster, pod: string, request: ExecRequest): Promise<ExecResult> {
  return collectExecOutput(await startExec(cluster, pod, request), { maxOutputBytes: request.maxOutputBytes });
}
