import { randomBytes } from 'node:crypto';
import type { Sandbox } from '@daytonaio/sdk';
import { type ExecExit, ExecOutput, type ExecProcess, type ExecRequest } from '@sandcast/provider-sdk';
import { shellQuote } from './client.ts';

/** Where sandboxes work; made at create. */
export const WORKDIR = '/workspace';
const DEFAULT_TIMEOUT_MS = 60_000;

/** Runs a short shell command to completion (housekeeping: kill, tar, mkdir), output combined. */
export async function runShell(sandbox: Sandbox, script: string): Promise<{ exitCode: number; output: string }> {
  const result = await sandbox.process.executeCommand(`sh -c ${shellQuote(script)}`, undefined, undefined, 120);
  return { exitCode: result.exitCode, output: result.result };
}

/**
 * The shell line a command runs as: in its own session (so a kill reaches every process it
 * started), its session id written where `kill` finds it, stdin from a file or nothing.
 */
function commandLine(request: ExecRequest, files: { pid: string; stdin: string | null }): string {
  const env = Object.entries(request.env ?? {}).map(([k, v]) => shellQuote(`${k}=${v}`));
  const argv = request.command.map(shellQuote);
  const inner = shellQuote('echo $$ > "$0"; exec "$@"');
  const stdin = files.stdin ? shellQuote(files.stdin) : '/dev/null';
  return `cd ${shellQuote(request.cwd ?? WORKDIR)} && exec setsid -w sh -c ${inner} ${shellQuote(files.pid)} env ${[...env, ...argv].join(' ')} < ${stdin}`;
}

/**
 * A command started in a Daytona session, its output handed over as the toolbox streams it.
 * The timeout and `kill()` end its whole session (process group) inside the sandbox. The
 * toolbox's log stream cannot be paused, so output the reader has not taken yet is queued.
 */
export async function execInSandbox(sandbox: Sandbox, request: ExecRequest): Promise<ExecProcess> {
  const id = `sandcast-${randomBytes(6).toString('hex')}`;
  const pidFile = `/tmp/${id}.pid`;
  let stdinFile: string | null = null;
  if (request.stdin !== undefined) {
    stdinFile = `/tmp/${id}.stdin`;
    await sandbox.fs.uploadFile(Buffer.from(request.stdin), stdinFile);
  }
  await sandbox.process.createSession(id);
  const started = await sandbox.process.executeSessionCommand(id, {
    command: commandLine(request, { pid: pidFile, stdin: stdinFile }),
    runAsync: true,
  });
  const commandId = started.cmdId;
  const output = new ExecOutput({ pause: () => undefined, resume: () => undefined });
  let timedOut = false;
  let killing: Promise<void> | null = null;
  const kill = () => {
    killing ??= runShell(
      sandbox,
      `for i in $(seq 1 50); do [ -s ${pidFile} ] && break; sleep 0.1; done; kill -9 -"$(cat ${pidFile})" 2>/dev/null; true`,
    ).then(() => undefined);
    return killing;
  };
  const timer = setTimeout(() => {
    timedOut = true;
    void kill().catch(() => undefined);
  }, request.timeoutMs ?? DEFAULT_TIMEOUT_MS);

  const exit = (async (): Promise<ExecExit> => {
    try {
      await sandbox.process.getSessionCommandLogs(
        id,
        commandId,
        (text) => output.push('stdout', Buffer.from(text, 'utf8')),
        (text) => output.push('stderr', Buffer.from(text, 'utf8')),
      );
      let exitCode: number | undefined;
      for (let attempt = 0; exitCode === undefined && attempt < 50; attempt++) {
        const command = await sandbox.process.getSessionCommand(id, commandId);
        exitCode = command.exitCode ?? undefined;
        if (exitCode === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { exitCode: exitCode ?? -1, timedOut };
    } finally {
      clearTimeout(timer);
      output.end();
      const leftovers = [pidFile, ...(stdinFile ? [stdinFile] : [])].join(' ');
      void Promise.allSettled([sandbox.process.deleteSession(id), runShell(sandbox, `rm -f ${leftovers}`)]);
    }
  })();
  // The caller reads `exit`; an unread rejection must not crash the process meanwhile.
  exit.catch(() => undefined);
  return {
    output: output.readable,
    exit,
    kill: async () => {
      output.discard();
      await kill().catch(() => undefined);
      await exit.catch(() => undefined);
    },
  };
}
