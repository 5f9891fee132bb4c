import { existsSync, lstatSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import type { PhaseSink } from './phases.ts';
import { shellQuote } from './proc.ts';
import { type HostChild, hostSpawn } from './spawner.ts';

/**
 * The sandbox runtime: bubblewrap (ADR 0002). A sandbox is a long-lived init started by bwrap in
 * fresh pid, mount, uts, ipc, cgroup and (unless the host network is allowed) network namespaces
 * over the overlay rootfs. Each exec is a new bwrap that joins the init's namespaces (network,
 * uts, ipc and cgroup through nsenter, pid through `--pidns`), mounts the same rootfs in a mount
 * namespace of its own and applies the same capability set, no_new_privs and seccomp filter.
 * Every process is placed in the sandbox's cgroups before it starts (the shell prologue writes
 * its own pid into `cgroup.procs` and then execs), so limits apply from the first instruction.
 * Execs mostly skip this line: it starts each sandbox's exec agent once, and the agent forks the
 * commands, which inherit all of the above (ADR 0030, exec.ts).
 */

/** What a root shell inside needs; no CAP_SYS_ADMIN, no CAP_MKNOD (no device cgroup guards /dev), no raw sockets. */
export const KEPT_CAPABILITIES = [
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
export const HOSTNAME = 'sandbox';

interface SandboxProcessSpec {
  rootfs: string;
  network: 'none' | 'host';
  seccompPath: string;
  /** `cgroup.procs` files the process joins before anything else runs. */
  procsFiles: string[];
  env: Record<string, string>;
  cwd: string;
  /**
   * Written to the process's oom_score_adj before it starts (raising needs no privilege), or null.
   * Set when the init could not be given -1000, so the OOM killer picks sandbox processes first.
   */
  oomScoreAdj?: number | null | undefined;
}

/**
 * The OCI runtimes' default read-only paths (runc/containerd). The sandbox is root in the host's
 * user namespace, so a writable /proc/sys would be the host's kernel settings (core_pattern runs
 * a program as host root). bwrap covers these itself only when it is not privileged.
 */
const READ_ONLY_PROC_PATHS = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'] as const;

/** The OCI defaults' masked paths: files hidden behind /dev/null, directories behind an empty read-only tmpfs. */
const MASKED_PROC_PATHS = [
  '/proc/acpi',
  '/proc/asound',
  '/proc/kcore',
  '/proc/keys',
  '/proc/key-users',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
] as const;

/**
 * bwrap arguments that make /proc safe after `--proc /proc`. Bind sources resolve in the host's
 * mount namespace, so `--ro-bind /proc/sys /proc/sys` is the host proc's sys directory made
 * read-only; what it shows still follows the reader's namespaces (its hostname, its network's
 * sysctls). Paths this kernel does not have are skipped: bwrap cannot create files in proc.
 */
function procProtectionArgs(exists: (path: string) => boolean = existsSync): string[] {
  const args: string[] = [];
  for (const path of READ_ONLY_PROC_PATHS) if (exists(path)) args.push('--ro-bind', path, path);
  for (const path of MASKED_PROC_PATHS) {
    if (!exists(path)) continue;
    if (statSync(path).isDirectory()) args.push('--tmpfs', path, '--remount-ro', path);
    else args.push('--ro-bind', '/dev/null', path);
  }
  return args;
}

let procArgs: string[] | null = null;

function commonArgs(spec: SandboxProcessSpec): string[] {
  procArgs ??= procProtectionArgs();
  const args = ['--bind', spec.rootfs, '/', '--proc', '/proc', ...procArgs, '--dev', '/dev', '--tmpfs', '/dev/shm'];
  // sysfs is never mounted; an image's own /sys is hidden so nothing can pose as it.
  // lstat: a sandbox may have made /sys a symlink, which must not be followed on the host.
  if (lstatSync(join(spec.rootfs, 'sys'), { throwIfNoEntry: false })?.isDirectory()) args.push('--tmpfs', '/sys', '--remount-ro', '/sys');
  args.push('--cap-drop', 'ALL');
  for (const cap of KEPT_CAPABILITIES) args.push('--cap-add', cap);
  args.push('--seccomp', '4', '--clearenv');
  for (const [key, value] of Object.entries(spec.env)) args.push('--setenv', key, value);
  args.push('--chdir', spec.cwd);
  return args;
}

function prologue(spec: Pick<SandboxProcessSpec, 'procsFiles' | 'oomScoreAdj'>): string {
  // Sandbox processes start with the conventional umask, not the server's private 077.
  const steps = ['umask 022', ...spec.procsFiles.map((file) => `echo $$ > ${shellQuote(file)} || exit 125`)];
  if (spec.oomScoreAdj !== null && spec.oomScoreAdj !== undefined)
    steps.push(`echo ${Math.trunc(spec.oomScoreAdj)} > /proc/self/oom_score_adj || exit 125`);
  return steps.join('; ');
}

/** Host environment for the helper processes (sh, nsenter, bwrap) themselves. */
const HOST_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };

/** Where the init binary is bound inside: /dev is bwrap's own tmpfs, so nothing lands in the rootfs. */
const INIT_PATH = '/dev/.sandcast-init';
/** Where the exec agent's binary is bound inside (ADR 0030), beside the init's. */
export const AGENT_PATH = '/dev/.sandcast-exec-agent';
/** The init's descriptors: bwrap's info (3), the seccomp filter (4), the ready report (5), the agent's channel (6). */
const AGENT_FD = 6;
const READY_TIMEOUT_MS = 30_000;
/** The score that keeps the OOM killer off the init: its death ends the whole sandbox. */
export const INIT_OOM_SCORE_ADJ = -1000;

export interface StartedInit {
  /** Pid (on the host) of the sandbox's pid 1; its namespaces are the sandbox's. */
  initPid: number;
  /** The init's oom_score_adj as read back after start. */
  oomScoreAdj: number;
  /** Why it is not INIT_OOM_SCORE_ADJ, when it is not. */
  oomError: string | null;
  /** The exec agent the init forked (ADR 0034): the host's end of its control socket and its pid inside; null when none. */
  agent: BootedAgent | null;
}

export interface BootedAgent {
  socket: Socket;
  innerPid: number;
}

/** The init keeps the server's oom_score_adj until it asks for its own. */
export interface InitSpec extends Omit<SandboxProcessSpec, 'oomScoreAdj'> {
  holdFifo: string;
  logFile: string;
  initBinary: string;
  /** sandcast-boot (native/sandcast-boot.c) and the steps it runs before bwrap: the disk and overlay mounts. */
  boot: { binary: string; steps: string[] };
  /** The exec agent's binary, for the init to fork; null: no agent at start. */
  agentBinary: string | null;
  /** Reports the start's three stretches (ADR 0034): the host process spawned, bwrap cloned the sandbox, the init ready. */
  phase?: PhaseSink | undefined;
}

/**
 * Starts the sandbox's pid 1: sandcast-init (native/sandcast-init.c), a reaper that blocks on a
 * FIFO only the host can write. One host process does the whole host side: the shell prologue
 * joins the cgroups, then sandcast-boot mounts what the steps say (the disk, the overlays; ADR
 * 0034) and execs bwrap, which runs the init `--as-pid-1`, so no other process of bwrap's sits
 * in the sandbox. The init forks the exec agent first thing, over a socket only the host and the
 * agent hold. It is detached: sandboxes outlive the server process. Resolves when the init
 * reports ready — after bwrap finished setting up (hostname, mounts) — never before, so no exec
 * can join half-built namespaces.
 */
export async function startInit(spec: InitSpec): Promise<StartedInit> {
  const bwrap = ['bwrap', '--unshare-pid', '--as-pid-1', '--unshare-uts', '--unshare-ipc', '--unshare-cgroup', '--hostname', HOSTNAME];
  if (spec.network === 'none') bwrap.push('--unshare-net');
  bwrap.push('--new-session', '--info-fd', '3', ...commonArgs(spec), '--ro-bind', spec.initBinary, INIT_PATH);
  if (spec.agentBinary) bwrap.push('--ro-bind', spec.agentBinary, AGENT_PATH);
  bwrap.push(INIT_PATH, String(INIT_OOM_SCORE_ADJ), '5');
  if (spec.agentBinary) bwrap.push(AGENT_PATH, String(AGENT_FD));
  // The prologue an exec's shell runs (umask, cgroups; the init keeps the server's oom_score_adj), then the mounts.
  const boot = ['umask', '022', ...spec.procsFiles.flatMap((file) => ['cgroup', file]), ...spec.boot.steps];
  boot.push('open', '4', spec.seccompPath, 'stdin', spec.holdFifo);
  if (spec.agentBinary) boot.push('agent', String(AGENT_FD));
  const log = { path: spec.logFile, flags: 'a' };
  let mark = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    spec.phase?.(name, now - mark);
    mark = now;
  };
  const child = await hostSpawn(spec.boot.binary, [...boot, '--', ...bwrap], {
    detached: true,
    env: HOST_ENV,
    stdio: ['ignore', log, log, 'pipe', 'ignore', 'pipe', spec.agentBinary ? 'pipe' : 'ignore'],
  });
  const agentSocket = child.stdio[AGENT_FD] ?? null;
  lap('init: spawn');
  return new Promise<StartedInit>((resolve, reject) => {
    // bwrap writes more than the pid to the info fd: the pipe is drained to its end, never closed
    // early (a closed pipe killed bwrap with SIGPIPE before it had let the sandbox start).
    const info = child.stdio[3];
    const ready = child.stdio[5];
    if (!info || !ready) {
      child.unref();
      return reject(new Error(`the sandbox init could not be started; see ${spec.logFile}`));
    }
    let infoText = '';
    let readyText = '';
    let settled = false;
    // bwrap's setup takes milliseconds; one that hangs (a stuck mount, say) is an error, not a wait.
    const timer = setTimeout(
      () => finish(new Error(`the sandbox init did not report ready within ${READY_TIMEOUT_MS / 1000} s; see ${spec.logFile}`)),
      READY_TIMEOUT_MS,
    );
    const finish = (error: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ready.destroy();
      info.unref?.();
      child.unref();
      if (error) return void lastWords(spec.logFile).then((words) => reject(words ? new Error(`${error.message}: ${words}`) : error));
      const pid = Number(/"child-pid"\s*:\s*(\d+)/.exec(infoText)?.[1]);
      const oom = /^ready oom_score_adj=(-?\d+) errno=(\d+)(?: agent=(\d+))?\n/.exec(readyText);
      if (!pid || !oom)
        return reject(
          new Error(`the sandbox init did not report itself (${JSON.stringify(readyText.slice(0, 200))}); see ${spec.logFile}`),
        );
      const innerPid = Number(oom[3] ?? 0);
      const agent = agentSocket && innerPid > 0 ? { socket: agentSocket, innerPid } : null;
      if (!agent) agentSocket?.destroy();
      void verifyOomScore(pid, Number(oom[1]), Number(oom[2])).then((result) => resolve({ initPid: pid, ...result, agent }), reject);
    };
    info.on('data', (chunk: Buffer) => {
      if (!infoText) lap('init: mounts → clone');
      infoText += chunk.toString('utf8');
    });
    info.on('error', () => undefined);
    ready.on('data', (chunk: Buffer) => {
      readyText += chunk.toString('utf8');
      if (!readyText.includes('\n')) return;
      lap('init: setup → ready');
      finish(null);
    });
    ready.on('error', () => undefined);
    child.on('error', (error) => finish(error));
    child.on('exit', (code) => finish(new Error(`the sandbox init exited (${code}) before it was ready; see ${spec.logFile}`)));
  }).catch((error: unknown) => {
    agentSocket?.destroy();
    throw error;
  });
}

/** The last line of the init's log (what sandcast-boot or bwrap said when a start failed), bounded. */
async function lastWords(logFile: string): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  return (text.trim().split('\n').at(-1) ?? '').slice(0, 500);
}

/**
 * The init cannot lower its own score (no CAP_SYS_RESOURCE inside); the host sets it on the
 * init's pid and reads it back. A host without CAP_SYS_RESOURCE cannot either: the caller learns
 * it from `oomError` and protects the init the other way round (see `oomScoreAdj` above).
 */
async function verifyOomScore(pid: number, held: number, initErrno: number): Promise<{ oomScoreAdj: number; oomError: string | null }> {
  if (held === INIT_OOM_SCORE_ADJ) return { oomScoreAdj: held, oomError: null };
  const file = `/proc/${pid}/oom_score_adj`;
  let hostError: string | null = null;
  try {
    await writeFile(file, String(INIT_OOM_SCORE_ADJ));
  } catch (error) {
    hostError = (error as NodeJS.ErrnoException).code ?? String(error);
  }
  const now = Number((await readFile(file, 'utf8')).trim());
  if (now === INIT_OOM_SCORE_ADJ) return { oomScoreAdj: now, oomError: null };
  return {
    oomScoreAdj: now,
    oomError: `the init's oom_score_adj stays ${now}: inside it was refused (errno ${initErrno}), from the host too (${hostError ?? 'not applied'}); the server lacks CAP_SYS_RESOURCE`,
  };
}

export interface SandboxSpawnSpec extends SandboxProcessSpec {
  initPid: number;
  /** The init's start time: a pid the kernel gave to another process since is never joined. */
  initStartTime: number;
  command: string[];
  /** false for PTYs: a new session would detach the terminal. */
  newSession: boolean;
  /** Host files bound read-only at a path inside (on bwrap's /dev tmpfs): the exec agent's binary. */
  binds?: Array<{ host: string; inside: string }> | undefined;
}

/** What an exec prints (exit 125) when the sandbox's init is gone. */
export const INIT_GONE = 'sandcast: the sandbox init is gone';

/** The host command line (`/bin/sh -c …`) that runs `command` inside the sandbox of `initPid`. */
export function sandboxCommandLine(spec: SandboxSpawnSpec): { file: string; args: string[]; env: Record<string, string> } {
  const ns = (kind: string) => `--${kind}=/proc/${spec.initPid}/ns/${kind}`;
  const nsenter = ['nsenter', ns('uts'), ns('ipc'), ns('cgroup')];
  if (spec.network === 'none') nsenter.push(ns('net'));
  const bwrap = ['bwrap', '--pidns', '3', '--die-with-parent'];
  if (spec.newSession) bwrap.push('--new-session');
  bwrap.push(...commonArgs(spec));
  for (const bind of spec.binds ?? []) bwrap.push('--ro-bind', bind.host, bind.inside);
  // The pid namespace is opened first, then the init is checked to be the same process: a pid
  // reused by a host process would otherwise hand over the host's namespaces (its hostname).
  const check = `[ "$(cut -d ' ' -f 22 /proc/${spec.initPid}/stat 2>/dev/null)" = ${spec.initStartTime} ] || { echo ${shellQuote(INIT_GONE)} >&2; exit 125; }`;
  const script = `${prologue(spec)}; exec 3<${shellQuote(`/proc/${spec.initPid}/ns/pid`)} 4<${shellQuote(spec.seccompPath)} || exit 125; ${check}; exec ${[...nsenter, '--', ...bwrap].map(shellQuote).join(' ')} "$@"`;
  return { file: '/bin/sh', args: ['-c', script, 'sandcast-exec', ...spec.command], env: HOST_ENV };
}

/** Spawns a command inside the sandbox with piped stdio. */
export function spawnInSandbox(spec: SandboxSpawnSpec): Promise<HostChild> {
  const line = sandboxCommandLine(spec);
  return hostSpawn(line.file, line.args, { env: line.env, stdio: ['pipe', 'pipe', 'pipe'] });
}
