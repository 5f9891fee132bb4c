import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The real `sandcast` binary (a tsx start each time). */
export const CLI = fileURLToPath(new URL('../../../apps/cli/bin/sandcast.mjs', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `sandcast <args>` with `env` over this process's environment and resolves with its exit
 * code and output; it never rejects (a failed command is a code, a killed one code 1).
 */
export function sandcast(
  args: string[],
  env: Record<string, string> = {},
  options: { timeoutMs?: number; encoding?: 'utf8' | 'latin1' } = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: { ...process.env, ...env },
        timeout: options.timeoutMs ?? 30_000,
        maxBuffer: 512 * 1024 * 1024,
        encoding: options.encoding ?? 'utf8',
      },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
