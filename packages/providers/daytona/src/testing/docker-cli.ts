import { type ChildProcess, execFile, spawn } from 'node:child_process';

/** The image the fake's default snapshot boots (built by the docker provider's ci-setup.sh). */
export const FAKE_DEFAULT_IMAGE = 'sandcast-test/debian:bookworm';

/** Runs `docker …` to completion. */
export function docker(args: string[], input?: Buffer): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('docker', args, { encoding: 'buffer', maxBuffer: 512 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr: stderr.toString('utf8') });
    });
    if (input) child.stdin?.end(input);
    else child.stdin?.end();
  });
}

/** `docker …` that must succeed. */
export async function dockerOk(args: string[], input?: Buffer): Promise<Buffer> {
  const result = await docker(args, input);
  if (result.code !== 0) throw new Error(`docker ${args.slice(0, 2).join(' ')} failed: ${result.stderr.trim()}`);
  return result.stdout;
}

/** A shell command in a container, its pipes handed to the caller. */
export function dockerExec(container: string, script: string, options: { interactive?: boolean } = {}): ChildProcess {
  return spawn('docker', ['exec', ...(options.interactive ? ['-i'] : []), container, 'sh', '-c', script], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Why the fake cannot run sandboxes here (no engine, no test image), or null. */
export async function fakeDaytonaSkipReason(): Promise<string | null> {
  const info = await docker(['info', '--format', '{{.ServerVersion}}']);
  if (info.code !== 0) return `no Docker engine answers (${info.stderr.trim().split('\n')[0]})`;
  const image = await docker(['image', 'inspect', FAKE_DEFAULT_IMAGE]);
  if (image.code !== 0) return `the test image ${FAKE_DEFAULT_IMAGE} is missing; run packages/providers/docker/scripts/ci-setup.sh`;
  return null;
}
