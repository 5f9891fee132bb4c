import { spawn, spawnSync } from 'node:child_process';

/**
 * Where an OpenSSH program is, or why the test cannot run. Under CI=true a missing program is a
 * failure, not a skip: CI must prove the real thing (scripts/services.sh installs them).
 */
export function openSshProgram(name: 'ssh' | 'sshd' | 'ssh-keygen'): { path: string | null; skipReason: string | null } {
  const candidates = name === 'sshd' ? ['/usr/sbin/sshd', 'sshd'] : [`/usr/bin/${name}`, name];
  for (const candidate of candidates) {
    const found = spawnSync('sh', ['-c', `command -v ${candidate}`], { encoding: 'utf8' });
    if (found.status === 0 && found.stdout.trim()) return { path: found.stdout.trim(), skipReason: null };
  }
  const reason = `${name} is not installed (Debian: openssh-${name === 'sshd' ? 'server' : 'client'}; scripts/services.sh installs it)`;
  if (process.env.CI === 'true') throw new Error(`CI=true but ${reason}`);
  return { path: null, skipReason: reason };
}

/** Options that keep the test's ssh client away from the user's config, agent and known hosts. */
export const SSH_CLIENT_OPTIONS = [
  '-F',
  '/dev/null',
  '-o',
  'StrictHostKeyChecking=no',
  '-o',
  'UserKnownHostsFile=/dev/null',
  '-o',
  'LogLevel=ERROR',
  '-o',
  'BatchMode=yes',
  '-o',
  'IdentitiesOnly=yes',
  '-o',
  'IdentityAgent=none',
  '-o',
  'ConnectTimeout=10',
];

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `ssh` client; input (if any) is written to its stdin, then closed. */
export function runSsh(args: string[], options: { input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('ssh', [...SSH_CLIENT_OPTIONS, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}
