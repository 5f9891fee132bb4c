import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { shellQuote } from './proc.ts';

/**
 * The sandbox runtime: bubblewrap (ADR 0002). A sandbox is a long-lived init started by bwrap in
 * fresh pid, mount, uts, ipc, cgroup and (unless the host network is allowed) network namespaces
 * over the overlay rootfs. Each exec is a new bwrap that joins the init's namespaces (network,
 * uts, ipc and cgroup through nsenter, pid through `--pidns`), mounts the same rootfs in a mount
 * namespace of its own and applies the same capability set, no_new_privs and seccomp filter.
 * Every process is placed in the sandbox's cgroups before it starts (the shell prologue writes
 * its own pid into `cgroup.procs` and then execs), so limits apply from the first instruction.
 */

/** What a root shell inside needs; no CAP_SYS_ADMIN, no CAP_MKNOD (no device cgroup guards /dev), no raw sockets. */
const KEPT_CAPABILITIES = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_KILL',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETPCAP',
  'CAP_SETFCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_AUDIT_WRITE',
] as const;

export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const HOSTNAME = 'sandbox';

export interface SandboxProcessSpec {
  rootfs: string;
  network: 'none' | 'host';
  seccompPath: string;
  /** `cgroup.procs` files the process joins before anything else runs. */
  procsFiles: string[];
  env: Record<string, string>;
  cwd: string;
}

function commonArgs(spec: SandboxProcessSpec): string[] {
  const args = ['--bind', spec.rootfs, '/', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/dev/shm', '--cap-drop', 'ALL'];
  for (const cap of KEPT_CAPABILITIES) args.push('--cap-add', cap);
  args.push('--seccomp', '4', '--clearenv');
  for (const [key, value] of Object.entries(spec.env)) args.push('--setenv', key, value);
  args.push('--chdir', spec.cwd);
  return args;
}

function prologue(procsFiles: string[]): string {
  return procsFiles.map((file) => `echo $$ > ${shellQuote(file)} || exit 125`).join('; ');
}

/** Host environment for the helper processes (sh, nsenter, bwrap) themselves. */
const HOST_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };

export interface StartedInit {
  /** Pid (on the host) of the sandbox's pid 1; its namespaces are the sandbox's. */
  initPid: number;
}

/**
 * Starts the sandbox's init: a shell that blocks reading a FIFO only the host can write, so it
 * needs nothing from the image but /bin/sh. It is detached: sandboxes outlive the server process.
 */
export function startInit(spec: SandboxProcessSpec & { holdFifo: string; logFile: string }): Promise<StartedInit> {
  const bwrap = ['bwrap', '--unshare-pid', '--unshare-uts', '--unshare-ipc', '--unshare-cgroup', '--hostname', HOSTNAME];
  if (spec.network === 'none') bwrap.push('--unshare-net');
  bwrap.push('--new-session', '--info-fd', '3', ...commonArgs(spec), '/bin/sh', '-c', 'read -r _; exit 0');
  // The init must never be the OOM killer's choice: its death takes the whole sandbox down. Execs
  // are not its children, so they keep the default score.
  const script = `${prologue(spec.procsFiles)}; echo -1000 > /proc/self/oom_score_adj; exec ${bwrap.map(shellQuote).join(' ')} 4<${shellQuote(spec.seccompPath)} 0<>${shellQuote(spec.holdFifo)}`;
  const log = openSync(spec.logFile, 'a');
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn('/bin/sh', ['-c', script], { detached: true, env: HOST_ENV, stdio: ['ignore', log, log, 'pipe'] });
    } finally {
      closeSync(log);
    }
    const info = child.stdio[3] as NodeJS.ReadableStream & { destroy(): void };
    let text = '';
    let settled = false;
    const finish = (error: Error | null, pid?: number) => {
      if (settled) return;
      settled = true;
      info.destroy();
      child.unref();
      if (error) reject(error);
      else resolve({ initPid: pid! });
    };
    info.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (match) finish(null, Number(match[1]));
    });
    info.on('error', () => undefined);
    child.on('error', (error) => finish(error));
    child.on('exit', (code) => finish(new Error(`the sandbox init exited (${code}) before it started; see ${spec.logFile}`)));
  });
}

export interface SandboxSpawnSpec extends SandboxProcessSpec {
  initPid: number;
  command: string[];
  /** false for PTYs: a new session would detach the terminal. */
  newSession: boolean;
}

/** The host command line (`/bin/sh -c …`) that runs `command` inside the sandbox of `initPid`. */
export function sandboxCommandLine(spec: SandboxSpawnSpec): { file: string; args: string[]; env: Record<string, string> } {
  const ns = (kind: string) => `--${kind}=/proc/${spec.initPid}/ns/${kind}`;
  const nsenter = ['nsenter', ns('uts'), ns('ipc'), ns('cgroup')];
  if (spec.network === 'none') nsenter.push(ns('net'));
  const bwrap = ['bwrap', '--pidns', '3', '--die-with-parent'];
  if (spec.newSession) bwrap.push('--new-session');
  bwrap.push(...commonArgs(spec));
  const script = `${prologue(spec.procsFiles)}; exec ${[...nsenter, '--', ...bwrap].map(shellQuote).join(' ')} "$@" 3<${shellQuote(`/proc/${spec.initPid}/ns/pid`)} 4<${shellQuote(spec.seccompPath)}`;
  return { file: '/bin/sh', args: ['-c', script, 'sandcast-exec', ...spec.command], env: HOST_ENV };
}

/** Spawns a command inside the sandbox with piped stdio. */
export function spawnInSandbox(spec: SandboxSpawnSpec): ChildProcess {
  const line = sandboxCommandLine(spec);
  return spawn(line.file, line.args, { env: line.env, stdio: ['pipe', 'pipe', 'pipe'] });
}
